// Package commitplan chooses how much steady GPU capacity to commit to (savings
// plans, reservations, committed use discounts) from hourly usage. (Being built.)
package commitplan

// Plan is the commitments the engine proposes for a fleet.
type Plan struct{}
