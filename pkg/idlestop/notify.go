package idlestop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gpufinops/gpufinops/pkg/money"
)

// DefaultNotifyTimeout bounds one webhook attempt.
const DefaultNotifyTimeout = 10 * time.Second

// notifyListMax is the most machines listed in one message.
const notifyListMax = 20

// Notifier posts a run's summary to a Slack-compatible incoming webhook.
type Notifier struct {
	// URL is the webhook; it is a secret and never appears in errors.
	URL string
	// Timeout bounds each attempt.
	Timeout time.Duration
	// Client sends the requests.
	Client *http.Client
	// Attempts is how many times a message is tried (on 5xx, 429, timeouts
	// and connection errors); Backoff is the pause before the second try,
	// doubled before each further one.
	Attempts int
	Backoff  time.Duration
}

// NewNotifier returns a Notifier with 3 attempts and a 1s backoff; a zero
// timeout is DefaultNotifyTimeout and a nil client http.DefaultClient.
func NewNotifier(url string, timeout time.Duration, client *http.Client) *Notifier {
	if timeout <= 0 {
		timeout = DefaultNotifyTimeout
	}
	if client == nil {
		client = http.DefaultClient
	}
	return &Notifier{URL: url, Timeout: timeout, Client: client, Attempts: 3, Backoff: time.Second}
}

// Message is the JSON body posted: Slack's text with one section block.
type Message struct {
	Text   string  `json:"text"`
	Blocks []Block `json:"blocks,omitempty"`
}

// Block is a Slack section block with mrkdwn text.
type Block struct {
	Type string     `json:"type"`
	Text *BlockText `json:"text,omitempty"`
}

// BlockText is a block's text.
type BlockText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Send posts the summary and the stop decisions. Call it after the stops:
// it retries 5xx, 429 and timeouts with backoff, each attempt bounded by the
// timeout, and its error is meant as a warning, never a failed run.
func (n *Notifier) Send(ctx context.Context, s Summary, decisions []Decision) error {
	if n == nil || n.URL == "" {
		return nil
	}
	headline, details := Format(s, decisions)
	msg := Message{Text: headline}
	if details != "" {
		msg.Text = headline + "\n" + details
		msg.Blocks = []Block{{Type: "section", Text: &BlockText{Type: "mrkdwn", Text: msg.Text}}}
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	attempts := max(n.Attempts, 1)
	backoff := n.Backoff
	var last error
	for a := 1; a <= attempts; a++ {
		if a > 1 {
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("notify: %w (after %d attempts: %v)", ctx.Err(), a-1, last)
			}
			backoff *= 2
		}
		retry, err := n.post(ctx, body)
		if err == nil {
			return nil
		}
		last = err
		if !retry || ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("notify: %w", last)
}

// post makes one attempt; retry says whether another may succeed.
func (n *Notifier) post(ctx context.Context, body []byte) (retry bool, err error) {
	timeout := n.Timeout
	if timeout <= 0 {
		timeout = DefaultNotifyTimeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, n.URL, bytes.NewReader(body))
	if err != nil {
		return false, errors.New("the webhook URL is not valid")
	}
	req.Header.Set("Content-Type", "application/json")
	client := n.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		// *url.Error names the URL, a secret: keep only the cause.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return true, fmt.Errorf("the webhook did not answer within %s", timeout)
		}
		return true, fmt.Errorf("posting to the webhook: %w", err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	err = fmt.Errorf("the webhook answered %s: %s", resp.Status, strings.TrimSpace(string(snippet)))
	return resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests, err
}

// Format renders a run for a chat message: a one-line headline and the list
// of machines stopped (or that would be), in Slack mrkdwn.
func Format(s Summary, decisions []Decision) (headline, details string) {
	verb := "stopped"
	n := s.Stopped
	if !s.Execute {
		verb, n = "would stop", s.Stop
	}
	var b strings.Builder
	b.WriteString("gpufinops idle-stop")
	if !s.Execute {
		b.WriteString(" (dry run)")
	}
	fmt.Fprintf(&b, " %s %d of %d GPU machines", verb, n, s.Considered)
	if n > 0 {
		fmt.Fprintf(&b, ", saving %s/hour (%s/month)", money.Format(s.HourlySavings.Decimal, money.USD), money.Format(s.MonthlySavings.Decimal, money.USD))
	}
	b.WriteString(".")
	if s.Failed > 0 {
		fmt.Fprintf(&b, " %d stops failed.", s.Failed)
	}
	if s.Error != "" {
		fmt.Fprintf(&b, " Error: %s", s.Error)
	}
	if s.RunID != "" {
		fmt.Fprintf(&b, " (run %s)", s.RunID)
	}
	headline = escape(b.String())

	var lines []string
	listed := 0
	for _, d := range decisions {
		if d.Decision != Stop {
			continue
		}
		listed++
		if listed > notifyListMax {
			continue
		}
		where := string(d.Provider) + " " + d.Account
		if d.Region != "" {
			where += "/" + d.Region
		}
		line := fmt.Sprintf("• %s (%s, %s): %s", d.ResourceID, d.InstanceType, where, resultWord(d))
		if !d.MonthlySavings.IsZero() {
			line += fmt.Sprintf(", %s/month", money.Format(d.MonthlySavings.Decimal, money.USD))
		}
		if d.Error != "" {
			line += " — " + d.Error
		}
		lines = append(lines, escape(line))
	}
	if listed > notifyListMax {
		lines = append(lines, fmt.Sprintf("…and %d more", listed-notifyListMax))
	}
	return headline, strings.Join(lines, "\n")
}

func resultWord(d Decision) string {
	switch d.Result {
	case "", ResultDryRun:
		return "would stop"
	}
	return d.Result
}

// escape makes text safe for Slack mrkdwn.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
