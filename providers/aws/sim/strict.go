package sim

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/gpufinops/gpufinops/providers/aws/sim/models"
)

// Strict mode: each request is checked against the vendored botocore model
// before it is served and each answer after (Options.Strict).

// modelProtocol is the botocore name of a request's protocol.
func modelProtocol(p protocol) string {
	switch p {
	case protoEC2Query:
		return models.EC2
	case protoAWSQuery:
		return models.Query
	case protoJSON10, protoJSON11:
		return models.JSON
	case protoRESTJSON:
		return models.RESTJSON
	}
	return models.CBOR
}

// CheckRequest checks a request against its service's model.
func CheckRequest(r *http.Request, body []byte) (service, op string, err error) {
	req, ok := classify(r, body)
	if !ok {
		return "", "", fmt.Errorf("not an AWS request: %s %s", r.Method, r.URL.Path)
	}
	m, err := models.Load(req.service)
	if err != nil {
		return req.service, req.op, err
	}
	return req.service, req.op, models.Join(m.Request(req.op, modelProtocol(req.proto), req.form, req.body))
}

// CheckAnswer checks the answer to a request against its service's model:
// its body when status is 2xx, else its error envelope.
func CheckAnswer(r *http.Request, body []byte, status int, h http.Header, answer []byte) error {
	req, ok := classify(r, body)
	if !ok {
		return fmt.Errorf("not an AWS request: %s %s", r.Method, r.URL.Path)
	}
	m, err := models.Load(req.service)
	if err != nil {
		return err
	}
	proto := modelProtocol(req.proto)
	if status >= 300 {
		return models.Join(m.ErrorAnswer(req.op, proto, status, h, answer))
	}
	return models.Join(m.Answer(req.op, proto, answer))
}

// validationError is how each service refuses a request its model
// forbids.
func validationError(service string) string {
	switch service {
	case "ec2":
		return "InvalidParameterValue"
	case "sts":
		return "ValidationError"
	}
	return "ValidationException"
}

// captureWriter keeps a copy of the answer it passes on.
type captureWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (c *captureWriter) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.body.Write(b)
	return c.ResponseWriter.Write(b)
}

func (c *captureWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
