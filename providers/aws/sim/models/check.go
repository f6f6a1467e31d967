package models

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Violation is one way a value breaks its model: the path of the member
// ("DescribeInstancesResult.Reservations[0].OwnerId") and what is wrong.
type Violation struct {
	Path, Problem string
}

func (v Violation) Error() string { return v.Path + ": " + v.Problem }

// Join is the violations as one error; nil when there are none.
func Join(vs []Violation) error {
	if len(vs) == 0 {
		return nil
	}
	errs := make([]error, len(vs))
	for i, v := range vs {
		errs[i] = v
	}
	return errors.Join(errs...)
}

// null is a JSON or CBOR null in a decoded value, which no shape allows.
type null struct{}

// Validate checks a decoded value against the named shape: a structure is a
// map[string]any keyed by member name, a list []any, a map
// map[string]any, strings string, integers int64, floating-point numbers
// float64 (or int64), booleans bool and timestamps time.Time.
func (m *Model) Validate(shape string, v any) []Violation {
	var c checker
	c.m = m
	c.check(shape, shape, v)
	return c.out
}

type checker struct {
	m   *Model
	out []Violation
}

func (c *checker) bad(path, format string, args ...any) {
	c.out = append(c.out, Violation{path, fmt.Sprintf(format, args...)})
}

func (c *checker) check(path, name string, v any) {
	sh, ok := c.m.Shapes[name]
	if !ok {
		c.bad(path, "shape %s is not in the model", name)
		return
	}
	if _, isNull := v.(null); isNull {
		c.bad(path, "null where the model has a %s", sh.Type)
		return
	}
	switch sh.Type {
	case "structure":
		obj, ok := v.(map[string]any)
		if !ok {
			c.bad(path, "%T where the model has structure %s", v, name)
			return
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ref, ok := sh.Members[k]
			if !ok {
				c.bad(path+"."+k, "unknown member of %s", name)
				continue
			}
			c.check(path+"."+k, ref.Shape, obj[k])
		}
		for _, r := range sh.Required {
			if _, ok := obj[r]; !ok {
				c.bad(path+"."+r, "required member of %s is missing", name)
			}
		}
	case "list":
		l, ok := v.([]any)
		if !ok {
			c.bad(path, "%T where the model has list %s", v, name)
			return
		}
		c.bounds(path, sh, float64(len(l)), "length")
		for i, e := range l {
			c.check(fmt.Sprintf("%s[%d]", path, i), sh.Member.Shape, e)
		}
	case "map":
		obj, ok := v.(map[string]any)
		if !ok {
			c.bad(path, "%T where the model has map %s", v, name)
			return
		}
		c.bounds(path, sh, float64(len(obj)), "size")
		for k, e := range obj {
			c.check(path+"{key}", sh.Key.Shape, k)
			c.check(path+"["+k+"]", sh.Value.Shape, e)
		}
	case "string":
		s, ok := v.(string)
		if !ok {
			c.bad(path, "%T where the model has string %s", v, name)
			return
		}
		if len(sh.Enum) > 0 && !slices.Contains(sh.Enum, s) {
			c.bad(path, "%q is not a value of enum %s", s, name)
		}
		c.bounds(path, sh, float64(utf8.RuneCountInString(s)), "length")
		if sh.Pattern != "" {
			if re := c.m.pattern(sh.Pattern); re != nil && !re.MatchString(s) {
				c.bad(path, "%q does not match %s's pattern %s", s, name, sh.Pattern)
			}
		}
	case "integer", "long":
		n, ok := v.(int64)
		if !ok {
			c.bad(path, "%T where the model has %s %s", v, sh.Type, name)
			return
		}
		if sh.Type == "integer" && (n > math.MaxInt32 || n < math.MinInt32) {
			c.bad(path, "%d does not fit integer %s", n, name)
		}
		c.bounds(path, sh, float64(n), "value")
	case "double", "float":
		switch x := v.(type) {
		case float64:
			c.bounds(path, sh, x, "value")
		case int64:
			c.bounds(path, sh, float64(x), "value")
		default:
			c.bad(path, "%T where the model has %s %s", v, sh.Type, name)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			c.bad(path, "%T where the model has boolean %s", v, name)
		}
	case "timestamp":
		if _, ok := v.(time.Time); !ok {
			c.bad(path, "%T where the model has timestamp %s", v, name)
		}
	case "blob":
		switch v.(type) {
		case string, []byte:
		default:
			c.bad(path, "%T where the model has blob %s", v, name)
		}
	default:
		c.bad(path, "shape type %s is not supported", sh.Type)
	}
}

func (c *checker) bounds(path string, sh *Shape, x float64, what string) {
	if sh.Min != nil && x < *sh.Min {
		c.bad(path, "%s %v is below the model's minimum %v", what, x, *sh.Min)
	}
	if sh.Max != nil && x > *sh.Max {
		c.bad(path, "%s %v is above the model's maximum %v", what, x, *sh.Max)
	}
}

// ErrorCodes are the error codes an operation may answer with: those of
// the exception shapes it names (their wire code where the model gives
// one) and AWS's common errors for every service.
func (m *Model) ErrorCodes(op string) []string {
	codes := slices.Clone(commonErrors)
	if m.Service == "ec2" {
		codes = append(codes, ec2Errors...)
	}
	if o, ok := m.Operations[op]; ok {
		for _, e := range o.Errors {
			codes = append(codes, e.Shape)
			if sh := m.Shapes[e.Shape]; sh != nil && sh.Error != nil && sh.Error.Code != "" {
				codes = append(codes, sh.Error.Code)
			}
		}
	}
	sort.Strings(codes)
	return slices.Compact(codes)
}

// commonErrors are the errors every AWS API may return
// (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/CommonErrors.html
// and the "Common Errors" page of each service's API reference).
var commonErrors = []string{
	"AccessDenied", "AccessDeniedException", "ExpiredToken", "ExpiredTokenException", "IncompleteSignature", "InternalError", "InternalFailure",
	"InvalidAction", "InvalidClientTokenId", "InvalidParameterCombination", "InvalidParameterValue",
	"InvalidQueryParameter", "MalformedQueryString", "MissingAction", "MissingAuthenticationToken",
	"MissingParameter", "NotAuthorized", "OptInRequired", "RequestExpired", "ServiceUnavailable",
	"ThrottlingException", "Throttling", "UnrecognizedClientException", "UnknownOperationException", "ValidationError", "ValidationException",
}

// ec2Errors are the EC2 error codes the EC2 model cannot name (it declares
// no exception shapes): https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html.
var ec2Errors = []string{
	"AuthFailure", "DryRunOperation", "IncorrectInstanceState", "InvalidFilter", "InvalidInstanceID",
	"InvalidInstanceID.Malformed", "InvalidInstanceID.NotFound", "InvalidInstanceType", "InvalidNextToken",
	"InvalidPaginationToken", "InvalidParameter", "RequestLimitExceeded", "UnauthorizedOperation",
	"UnknownParameter", "UnsupportedOperation", "Unavailable",
}

// joinPath is parent.member.
func joinPath(parent, member string) string {
	if parent == "" {
		return member
	}
	return parent + "." + strings.TrimPrefix(member, ".")
}
