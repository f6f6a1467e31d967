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

// PagingProblems walks a listing in small pages and in one page and says
// what is wrong: a broken token on either walk, or the two not seeing the
// same items, or the small walk not taking several pages.
func PagingProblems(name string, small, whole func(token *string) (int, *string, error)) []string {
	var out []string
	n, pages, problems := PageProblems(small, 1000)
	for _, p := range problems {
		out = append(out, fmt.Sprintf("%s paging: %s", name, p))
	}
	all, _, problems := PageProblems(whole, 1000)
	for _, p := range problems {
		out = append(out, fmt.Sprintf("%s paging (one page): %s", name, p))
	}
	if n != all || pages < 2 {
		out = append(out, fmt.Sprintf("%s: %d items in %d small pages, %d in one page; want the same items over several pages", name, n, pages, all))
	}
	return out
}
