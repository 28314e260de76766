package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// Client talks to RabbitMQ's management HTTP API (`/api/...`) through
// net/http. It holds no credentials: the operator's `http` grant holds
// them, and the host adds them to each request on its way out of the
// sandbox.
type Client struct {
	// endpoint is the API's base URL without a trailing slash:
	// `http://127.0.0.1:15672`.
	endpoint string
	http     *http.Client
	// logf writes one debug line (the host's log in the component).
	logf func(format string, args ...any)
}

// errNotFound is what a request answered 404 returns: the object does not
// exist (or its virtual host does not).
var errNotFound = errors.New("not found")

// NewClient is a client of the API at endpoint whose requests go through
// transport; every request's headers, as the provider hands them to the
// transport, are logged with logf.
func NewClient(endpoint string, transport http.RoundTripper, logf func(format string, args ...any)) *Client {
	c := &Client{endpoint: strings.TrimRight(endpoint, "/"), logf: logf}
	c.http = &http.Client{Transport: loggingTransport{next: transport, logf: logf}}
	return c
}

// path joins API path segments, each percent-encoded (the default virtual
// host `/` is `%2F`): path("vhosts", "/") is `/api/vhosts/%2F`.
func path(segments ...string) string {
	var b strings.Builder
	b.WriteString("/api")
	for _, s := range segments {
		b.WriteString("/")
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// get reads the JSON object at apiPath into out; errNotFound when the
// server answers 404.
func (c *Client) get(apiPath string, out any) error {
	_, err := c.do(http.MethodGet, apiPath, nil, out)
	return err
}

// put sends body to apiPath as JSON.
func (c *Client) put(apiPath string, body any) error {
	_, err := c.do(http.MethodPut, apiPath, body, nil)
	return err
}

// remove deletes apiPath; an object already gone is success, as a delete
// of something that no longer exists has nothing left to do.
func (c *Client) remove(apiPath string) error {
	_, err := c.do(http.MethodDelete, apiPath, nil, nil)
	if errors.Is(err, errNotFound) {
		c.logf("DELETE %s: already gone", apiPath)
		return nil
	}
	return err
}

// do sends one request and reads a JSON answer into out (when not nil).
// It returns the answer's headers.
func (c *Client) do(method, apiPath string, body any, out any) (http.Header, error) {
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encoding the body of %s %s: %w", method, apiPath, err)
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.endpoint+apiPath, reader)
	if err != nil {
		return nil, fmt.Errorf("building %s %s: %w", method, apiPath, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &unreachableError{endpoint: c.endpoint, method: method, path: apiPath, err: cause(err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the answer to %s %s: %w", method, apiPath, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return resp.Header, errNotFound
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, &unauthorizedError{endpoint: c.endpoint, method: method, path: apiPath}
	case resp.StatusCode >= 300:
		return nil, &apiError{method: method, path: apiPath, status: resp.Status, reason: reasonOf(data)}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return nil, fmt.Errorf("the answer to %s %s is not the JSON expected (%v): %s", method, apiPath, err, data)
		}
	}
	return resp.Header, nil
}

// cause is what a failed request ran into, without the method and URL
// that net/http and the transport wrap around it (the message names them
// once).
func cause(err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
	}
	return err
}

// reasonOf is the `reason` RabbitMQ gives in an error answer, or the body.
func reasonOf(body []byte) string {
	var answer struct {
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}
	if json.Unmarshal(body, &answer) == nil && answer.Reason != "" {
		return answer.Reason
	}
	return strings.TrimSpace(string(body))
}

// apiError is an answer of RabbitMQ's refusing a request.
type apiError struct {
	method, path, status, reason string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("RabbitMQ refused %s %s: %s: %s", e.method, e.path, e.status, e.reason)
}

// unreachableError is a request that got no answer: the server is down,
// or its origin is not granted.
type unreachableError struct {
	endpoint, method, path string
	err                    error
}

func (e *unreachableError) Error() string {
	origin := e.endpoint
	if u, err := url.Parse(e.endpoint); err == nil {
		origin = u.Scheme + "://" + u.Host
	}
	return fmt.Sprintf("cannot reach RabbitMQ at %s (%s %s): %v. Is the server running, and is its origin granted "+
		"to the provider (sandbox { http { url = %q } })?", e.endpoint, e.method, e.path, e.err, origin)
}

func (e *unreachableError) Unwrap() error { return e.err }

// unauthorizedError is a 401: the grant carries no credentials, or wrong
// ones.
type unauthorizedError struct {
	endpoint, method, path string
}

func (e *unauthorizedError) Error() string {
	return fmt.Sprintf("RabbitMQ at %s refused %s %s as unauthorised (401). The provider sends no credentials of "+
		"its own: the operator grants them in the provider's sandbox block, "+
		"http { url = %q, headers = { Authorization = \"Basic ${base64encode(\"user:password\")}\" } }",
		e.endpoint, e.method, e.path, e.endpoint)
}

// loggingTransport logs each request's method, path and headers exactly as
// the provider hands them on, and the answer's status and headers as they
// come back: everything of the exchange the provider itself ever sees.
type loggingTransport struct {
	next http.RoundTripper
	logf func(format string, args ...any)
}

// RoundTrip implements http.RoundTripper.
func (t loggingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.logf("%s %s: request headers the provider sends: %s", req.Method, req.URL.EscapedPath(), headerList(req.Header))
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		t.logf("%s %s: no answer: %v", req.Method, req.URL.EscapedPath(), err)
		return nil, err
	}
	t.logf("%s %s: %s, response headers the provider receives: %s", req.Method, req.URL.EscapedPath(), resp.Status, headerList(resp.Header))
	return resp, nil
}

// headerList renders headers as `[Name: value, …]`, sorted by name.
func headerList(h http.Header) string {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, name := range names {
		for _, v := range h[name] {
			parts = append(parts, name+": "+v)
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
