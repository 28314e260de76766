// Package cairnhttp is an http.RoundTripper over the host's wasi:http
// outgoing handler, so that net/http clients work inside cairn's sandbox
// (Go's wasip1 port has no sockets):
//
//	client := &http.Client{Transport: cairnhttp.Transport{}}
//	resp, err := client.Get("http://127.0.0.1:15672/api/overview")
//
// Importing the package also makes it http.DefaultTransport, so that
// http.Get and libraries that use http.DefaultClient work unchanged.
//
// The host sends the request only to an origin the operator granted (`http {
// url = "…" }` in the provider's sandbox block), with the headers the grant
// holds (credentials the provider never sees); any other request fails
// with an error that says the sandbox denied it.
//
// Outside a component (a provider's unit tests) Transport answers every
// request with an error: tests use their own transport (httptest).
package cairnhttp

import "net/http"

// Transport sends requests through the host's wasi:http. The zero value is
// ready to use. A request's context is not watched: the host's per-call
// timeout bounds every request.
type Transport struct{}

func init() {
	http.DefaultTransport = Transport{}
}
