package simkit

import "fmt"

// PageProblems walks a paginated call from its first page and says what
// breaks paging semantics: an empty next token (absent is the end), a
// token seen twice (the pages loop) or more than limit pages. call gets the
// previous page's token (nil first) and returns the page's item count and
// next token. The contract tests of the simulators share it.
func PageProblems(call func(token *string) (items int, next *string, err error), limit int) (items, pages int, problems []string) {
	seen := map[string]bool{}
	var token *string
	for {
		n, next, err := call(token)
		if err != nil {
			return items, pages, append(problems, fmt.Sprintf("page %d: %v", pages+1, err))
		}
		items += n
		pages++
		if next == nil {
			return items, pages, problems
		}
		if *next == "" {
			return items, pages, append(problems, fmt.Sprintf("page %d: empty next token (absent is the end)", pages))
		}
		if seen[*next] {
			return items, pages, append(problems, fmt.Sprintf("page %d: token %q seen before: the pages loop", pages, *next))
		}
		if pages >= limit {
			return items, pages, append(problems, fmt.Sprintf("more than %d pages", limit))
		}
		seen[*next] = true
		token = next
	}
}
