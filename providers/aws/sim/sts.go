package sim

import (
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/gpufinops/gpufinops/pkg/fleet"
)

const stsNamespace = "https://sts.amazonaws.com/doc/2011-06-15/"

// session is what an access key issued by AssumeRole stands for.
type session struct {
	account, roleName, sessionName string
}

var accessKeyRe = regexp.MustCompile(`Credential=([^/,\s]+)/`)

// accessKeyOf reads the access key ID from a SigV4 Authorization header.
func accessKeyOf(r *http.Request) string {
	if m := accessKeyRe.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
		return m[1]
	}
	return ""
}

// callerAccount is the account a request acts in: the role's account for
// keys issued by AssumeRole, Options.AccountID for anything else (unsigned
// requests and any other credentials).
func (s *Server) callerAccount(req request) string {
	if sess, ok := s.sessionOf(req.accessKey); ok {
		return sess.account
	}
	return s.opts.AccountID
}

func (s *Server) sessionOf(key string) (session, bool) {
	if key == "" {
		return session{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[key]
	return sess, ok
}

// serveSTS answers STS: GetCallerIdentity and AssumeRole.
func (s *Server) serveSTS(w http.ResponseWriter, req request) {
	switch req.op {
	case "GetCallerIdentity":
		s.getCallerIdentity(w, req)
	case "AssumeRole":
		s.assumeRole(w, req)
	default:
		writeError(w, req, http.StatusBadRequest, "InvalidAction", "The action "+req.op+" is not valid for this web service (the simulator serves GetCallerIdentity and AssumeRole).")
	}
}

type responseMetadata struct {
	RequestID string `xml:"RequestId"`
}

type callerIdentityResponse struct {
	Result struct {
		Arn     string `xml:"Arn"`
		UserID  string `xml:"UserId"`
		Account string `xml:"Account"`
	} `xml:"GetCallerIdentityResult"`
	Metadata responseMetadata `xml:"ResponseMetadata"`
}

func (s *Server) getCallerIdentity(w http.ResponseWriter, req request) {
	var out callerIdentityResponse
	if sess, ok := s.sessionOf(req.accessKey); ok {
		out.Result.Account = sess.account
		out.Result.Arn = "arn:aws:sts::" + sess.account + ":assumed-role/" + sess.roleName + "/" + sess.sessionName
		out.Result.UserID = roleID(sess.account, sess.roleName) + ":" + sess.sessionName
	} else {
		acct := s.opts.AccountID
		out.Result.Account = acct
		out.Result.Arn = "arn:aws:iam::" + acct + ":user/gpufinops-sim"
		out.Result.UserID = "AIDA" + upperID(17, "user", acct)
	}
	out.Metadata.RequestID = newRequestID()
	writeXMLResponse(w, "GetCallerIdentity", stsNamespace, out)
}

// roleID is the stable unique ID of a role (AROA…).
func roleID(account, role string) string {
	return "AROA" + upperID(17, "role", account, role)
}

var roleARNRe = regexp.MustCompile(`^arn:aws[a-z-]*:iam::(\d{12}):role/(?:[\w+=,.@-]+/)*([\w+=,.@-]{1,64})$`)

var sessionNameRe = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)

type assumeRoleResponse struct {
	Result struct {
		Credentials struct {
			AccessKeyID     string `xml:"AccessKeyId"`
			SecretAccessKey string `xml:"SecretAccessKey"`
			SessionToken    string `xml:"SessionToken"`
			Expiration      string `xml:"Expiration"`
		} `xml:"Credentials"`
		AssumedRoleUser struct {
			AssumedRoleID string `xml:"AssumedRoleId"`
			Arn           string `xml:"Arn"`
		} `xml:"AssumedRoleUser"`
		PackedPolicySize int `xml:"PackedPolicySize"`
	} `xml:"AssumeRoleResult"`
	Metadata responseMetadata `xml:"ResponseMetadata"`
}

// assumeRole issues temporary credentials for any well-formed role ARN (no
// trust policies are simulated). Requests signed with the returned access key
// act in the role's account.
func (s *Server) assumeRole(w http.ResponseWriter, req request) {
	arn := req.form.Get("RoleArn")
	name := req.form.Get("RoleSessionName")
	m := roleARNRe.FindStringSubmatch(arn)
	if m == nil {
		writeError(w, req, http.StatusBadRequest, "ValidationError", "RoleArn "+strconv.Quote(arn)+" is not a valid IAM role ARN")
		return
	}
	if !sessionNameRe.MatchString(name) {
		writeError(w, req, http.StatusBadRequest, "ValidationError", "RoleSessionName must be 2 to 64 characters of [\\w+=,.@-]")
		return
	}
	duration := 3600
	if v := req.form.Get("DurationSeconds"); v != "" {
		d, err := strconv.Atoi(v)
		if err != nil || d < 900 || d > 43200 {
			writeError(w, req, http.StatusBadRequest, "ValidationError", "DurationSeconds must be between 900 and 43200")
			return
		}
		duration = d
	}
	account, role := m[1], m[2]

	s.mu.Lock()
	if s.sessions == nil {
		s.sessions = map[string]session{}
	}
	seq := strconv.Itoa(len(s.sessions))
	key := "ASIA" + upperID(16, "key", arn, name, seq)
	s.sessions[key] = session{account: account, roleName: role, sessionName: name}
	s.mu.Unlock()

	var out assumeRoleResponse
	c := &out.Result.Credentials
	c.AccessKeyID = key
	c.SecretAccessKey = upperID(40, "secret", key)
	c.SessionToken = "SIMSESSION" + upperID(60, "token", key)
	// Credentials expire on the wall clock, not the simulator's clock: the
	// SDK's credential cache compares them with time.Now.
	c.Expiration = time.Now().UTC().Add(time.Duration(duration) * time.Second).Format(awsTime)
	out.Result.AssumedRoleUser.AssumedRoleID = roleID(account, role) + ":" + name
	out.Result.AssumedRoleUser.Arn = "arn:aws:sts::" + account + ":assumed-role/" + role + "/" + name
	out.Metadata.RequestID = newRequestID()
	writeXMLResponse(w, "AssumeRole", stsNamespace, out)
}

// fleetAccount is the account most of the fleet's AWS instances name (the
// smallest on a tie), else 123456789012.
func fleetAccount(f *fleet.Fleet) string {
	n := map[string]int{}
	best := ""
	for _, in := range f.Instances {
		if in.Provider != fleet.AWS || in.Account == "" {
			continue
		}
		n[in.Account]++
		if c := n[in.Account]; best == "" || c > n[best] || (c == n[best] && in.Account < best) {
			best = in.Account
		}
	}
	if best == "" {
		return "123456789012"
	}
	return best
}
