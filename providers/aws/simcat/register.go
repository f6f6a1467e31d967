package simcat

import (
	"flag"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/gpufinops/gpufinops/pkg/fleet"
	"github.com/gpufinops/gpufinops/pricing/catalog"
	"github.com/gpufinops/gpufinops/providers/aws/sim"
	"github.com/gpufinops/gpufinops/providers/simkit"
)

// DefaultAccount is the account plain credentials act in when neither
// --account nor the fleet names one.
const DefaultAccount = "123456789012"

var accountID = regexp.MustCompile(`^\d{12}$`)

// account is cloudsim's --account.
var account string

func init() {
	simkit.Register(simkit.Simulator{
		Name: "aws", Title: "AWS", Provider: fleet.AWS, EndpointEnv: "AWS_ENDPOINT_URL",
		Ops: sim.Ops,
		Flags: func(fs *flag.FlagSet) func() error {
			fs.StringVar(&account, "account", "", "AWS account plain credentials act in, and of instances that name none (default: the fleet's most common AWS account, else "+DefaultAccount+")")
			return func() error {
				if account != "" && !accountID.MatchString(account) {
					return fmt.Errorf("--account %q is not a 12-digit AWS account ID", account)
				}
				return nil
			}
		},
		Build: func(f *fleet.Fleet, env simkit.Env) (simkit.Sim, error) {
			cat, err := catalog.Embedded()
			if err != nil {
				return nil, fmt.Errorf("loading the catalog: %w", err)
			}
			opts := Options(f, cat)
			caller, others := Accounts(f, account)
			opts.AccountID = caller
			opts.Kit = env.Kit
			opts.Now = env.Now
			return &registered{Server: sim.New(f, opts), caller: caller, others: others}, nil
		},
	})
}

// registered is the AWS simulator as cmd/cloudsim runs it.
type registered struct {
	*sim.Server
	caller string
	others []string
}

// Notes says which account plain credentials act in and how to reach the
// fleet's other accounts.
func (r *registered) Notes() []string {
	note := "static access keys act in account " + r.caller
	if len(r.others) > 0 {
		note += fmt.Sprintf("; accounts %s through AssumeRole (--role-arn arn:aws:iam::%s:role/NAME)", strings.Join(r.others, ", "), r.others[0])
	}
	return []string{note}
}

// Accounts returns the account plain credentials act in (flag, else the
// account most of the fleet's AWS instances name, else DefaultAccount) and
// the fleet's other AWS accounts, sorted.
func Accounts(f *fleet.Fleet, flag string) (caller string, others []string) {
	count := map[string]int{}
	for _, in := range f.Instances {
		if in.Provider == fleet.AWS && in.Account != "" {
			count[in.Account]++
		}
	}
	caller = flag
	if caller == "" {
		for a, n := range count {
			if caller == "" || n > count[caller] || (n == count[caller] && a < caller) {
				caller = a
			}
		}
	}
	if caller == "" {
		caller = DefaultAccount
	}
	for a := range count {
		if a != caller {
			others = append(others, a)
		}
	}
	sort.Strings(others)
	return caller, others
}
