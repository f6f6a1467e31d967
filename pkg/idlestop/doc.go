// Package idlestop decides which idle GPU machines may be stopped, stops them
// through the providers' Stopper capability, records every decision in an
// append-only audit log and tells a chat webhook what it did.
//
// The flow of one run (gpufinops idle-stop, every 15 minutes from cron or a
// Kubernetes CronJob):
//
//  1. LockTargets takes one lock per provider and account (Target), so two
//     runs over the same accounts never act at once, whatever their logs;
//     OpenAudit opens the audit log under its own lock, so runs sharing it
//     never interleave lines. Hold both for the whole run.
//  2. Reconcile settles the intents earlier runs left without an outcome (a
//     crash, a kill) against the cloud's state, writing reconciled lines.
//  3. Decide turns fresh candidates (instances with samples over the window)
//     into exactly one stop or skip Decision each, with a reason code.
//  4. Execute checks the cap (Cap), the permission to stop (one dry-run stop
//     per scope), re-checks every stop candidate, reserves the stops in the
//     shared Ledger and stops them with bounded concurrency: an intent line
//     is synced before each stop is sent and an outcome line written when it
//     returns. When its context ends (a signal, the run timeout) no new stop
//     starts, stops in flight get Options.Grace, then are logged unknown;
//     the rest are not-attempted, and the summary is written. Without
//     Options.Execute it is a dry run.
//  5. Notifier.Send posts the summary to a Slack-compatible webhook; its
//     failure is only a warning.
//
// Decide is pure and deterministic; the package never terminates, hibernates
// or force-stops anything.
package idlestop
