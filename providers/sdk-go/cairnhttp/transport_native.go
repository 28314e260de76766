//go:build !wasip1

package cairnhttp

import (
	"errors"
	"net/http"
)

// RoundTrip fails: there is no host to send the request through.
func (Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	return nil, errors.New("cairnhttp: requests go through the host's wasi:http, which exists only inside a component (use httptest in unit tests)")
}
