SELECT
  `ProviderName` AS provider_name,
  `ResourceId` AS resource_id,
  `SubAccountId` AS account,
  `RegionId` AS region,
  `BillingCurrency` AS currency,
  `ChargeCategory` AS charge_category,
  `ChargeDescription` AS charge_description,
  `ServiceCategory` AS service_category,
  `PricingCategory` AS pricing_category,
  `CommitmentDiscountId` AS commitment_id,
  `CommitmentDiscountStatus` AS commitment_status,
  `CommitmentDiscountType` AS commitment_type,
  `CapacityReservationId` AS capacity_id,
  `CapacityReservationStatus` AS capacity_status,
  `SkuPriceDetails` AS sku_price_details,
  `ConsumedUnit` AS consumed_unit,
  SUM(CAST(`BilledCost` AS BIGNUMERIC)) AS billed,
  SUM(CAST(`EffectiveCost` AS BIGNUMERIC)) AS effective,
  SUM(CAST(`ListCost` AS BIGNUMERIC)) AS list,
  SUM(CAST(`ContractedCost` AS BIGNUMERIC)) AS contracted,
  SUM(CAST(`ConsumedQuantity` AS BIGNUMERIC)) AS consumed,
  COUNT(`ConsumedQuantity`) AS consumed_rows,
  MIN(`ChargePeriodStart`) AS first_start,
  MAX(COALESCE(`ChargePeriodEnd`, `ChargePeriodStart`)) AS last_end,
  COUNT(*) AS row_count
FROM `proj.billing.focus`
WHERE ((LOWER(`CommitmentDiscountStatus`) = 'unused' AND `CommitmentDiscountId` IS NOT NULL)
   OR (`ResourceId` IS NOT NULL AND (`ChargeCategory` IS NULL OR LOWER(`ChargeCategory`) <> 'purchase')))
  AND `ChargePeriodStart` >= TIMESTAMP '2026-11-01 00:00:00+00'
  AND `ChargePeriodStart` < TIMESTAMP '2026-12-01 00:00:00+00'
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16
