package text

import "testing"

func TestPlural(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Plural(0, "instance"), "0 instances"},
		{Plural(1, "instance"), "1 instance"},
		{Plural(2, "day"), "2 days"},
		{PluralOf(1, "policy", "policies"), "1 policy"},
		{PluralOf(3, "policy", "policies"), "3 policies"},
		{PluralNumber(1, "GPU"), "1 GPU"},
		{PluralNumber(0.5, "GPU"), "0.5 GPUs"},
		{PluralNumber(8, "GPU"), "8 GPUs"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
