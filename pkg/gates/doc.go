// Package gates evaluates --fail-on expressions against a report: CI fails
// the build (exit code 5) when, say, the monthly savings found exceed a line.
//
// An expression is one or more terms joined by "&&". A comparison term names
// a metric, an operator (> >= < <= = !=) and a number: savings>5000. A filter
// term (confidence=high, kind=spot, provider=aws) restricts what the
// comparisons in the same expression count. The gate trips when every
// comparison in it holds. docs/report.md lists the metrics.
package gates
