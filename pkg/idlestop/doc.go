// Package idlestop decides which idle GPU machines may be stopped, stops them
// through the providers' Stopper capability, records every decision in an
// append-only audit log and tells a chat webhook what it did.
//
// The flow of one run (gpufinops idle-stop, every 15 minutes from cron or a
// Kubernetes CronJob):
//
//  1. OpenAudit takes the run lock and opens the audit log; hold it for the
//     whole run, so a second run waits and never stops the same machine.
//  2. Decide turns fresh candidates (instances with samples over the window)
//     into exactly one stop or skip Decision each, with a reason code.
//  3. Execute checks the cap (Cap), the permission to stop (one dry-run stop
//     per scope), re-checks every stop candidate and stops them with bounded
//     concurrency, writing each decision to the audit log as soon as it is
//     final. Without Options.Execute it is a dry run.
//  4. Notifier.Send posts the summary to a Slack-compatible webhook; its
//     failure is only a warning.
//
// Decide is pure and deterministic; the package never terminates, hibernates
// or force-stops anything.
package idlestop
