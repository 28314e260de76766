//go:build wasip1

package cairnhttp

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	witTypes "cairn.dev/sdk-go/internal/gopkg/wit/types"
	handler "cairn.dev/sdk-go/internal/wit/imports/wasi_http_outgoing_handler"
	types "cairn.dev/sdk-go/internal/wit/imports/wasi_http_types"
	streams "cairn.dev/sdk-go/internal/wit/imports/wasi_io_streams"
)

// chunk is the most one blocking-write-and-flush may take (wasi:io's
// limit).
const chunk = 4096

// RoundTrip sends req through the host and returns its response, whose
// Body streams from the host.
func (Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	outgoing, err := outgoingRequest(req)
	if err != nil {
		return nil, err
	}
	bodyResult := outgoing.Body()
	if bodyResult.IsErr() {
		return nil, fmt.Errorf("cairnhttp: %s %s: the request has no body to write", req.Method, req.URL)
	}
	body := bodyResult.Ok()
	// Sent first, then the body streams after it: a large body is not held
	// in the host's buffer waiting for the request to start.
	sent := handler.Handle(outgoing, witTypes.None[*types.RequestOptions]())
	if sent.IsErr() {
		return nil, requestError(req, errorCode(sent.Err()))
	}
	future := sent.Ok()
	defer future.Drop()
	if err := writeBody(body, req.Body); err != nil {
		return nil, fmt.Errorf("cairnhttp: %s %s: sending the body: %w", req.Method, req.URL, err)
	}
	incoming, err := await(future)
	if err != nil {
		return nil, requestError(req, err)
	}
	return response(req, incoming)
}

// outgoingRequest is req as a wasi:http request (without its body).
func outgoingRequest(req *http.Request) (*types.OutgoingRequest, error) {
	var entries []witTypes.Tuple2[string, []uint8]
	for name, values := range req.Header {
		for _, v := range values {
			entries = append(entries, witTypes.Tuple2[string, []uint8]{F0: strings.ToLower(name), F1: []byte(v)})
		}
	}
	if req.Host != "" && req.Host != req.URL.Host {
		entries = append(entries, witTypes.Tuple2[string, []uint8]{F0: "host", F1: []byte(req.Host)})
	}
	if req.ContentLength > 0 && req.Header.Get("Content-Length") == "" {
		entries = append(entries, witTypes.Tuple2[string, []uint8]{F0: "content-length", F1: []byte(fmt.Sprint(req.ContentLength))})
	}
	fields := types.FieldsFromList(entries)
	if fields.IsErr() {
		return nil, fmt.Errorf("cairnhttp: %s %s: a header is refused (%s)", req.Method, req.URL, headerError(fields.Err()))
	}
	r := types.MakeOutgoingRequest(fields.Ok())
	method := methodOf(req.Method)
	scheme := types.MakeSchemeHttp()
	switch req.URL.Scheme {
	case "http":
	case "https":
		scheme = types.MakeSchemeHttps()
	default:
		return nil, fmt.Errorf("cairnhttp: %s: unsupported scheme %q", req.URL, req.URL.Scheme)
	}
	path := req.URL.RequestURI()
	if r.SetMethod(method).IsErr() || r.SetScheme(witTypes.Some(scheme)).IsErr() ||
		r.SetAuthority(witTypes.Some(req.URL.Host)).IsErr() || r.SetPathWithQuery(witTypes.Some(path)).IsErr() {
		return nil, fmt.Errorf("cairnhttp: %s %s: the host refused the request's method, scheme, authority or path", req.Method, req.URL)
	}
	return r, nil
}

func methodOf(m string) types.Method {
	switch strings.ToUpper(m) {
	case "", http.MethodGet:
		return types.MakeMethodGet()
	case http.MethodHead:
		return types.MakeMethodHead()
	case http.MethodPost:
		return types.MakeMethodPost()
	case http.MethodPut:
		return types.MakeMethodPut()
	case http.MethodDelete:
		return types.MakeMethodDelete()
	case http.MethodConnect:
		return types.MakeMethodConnect()
	case http.MethodOptions:
		return types.MakeMethodOptions()
	case http.MethodTrace:
		return types.MakeMethodTrace()
	case http.MethodPatch:
		return types.MakeMethodPatch()
	}
	return types.MakeMethodOther(m)
}

// writeBody copies body (may be nil) into the request's body stream and
// finishes it.
func writeBody(out *types.OutgoingBody, body io.Reader) error {
	streamResult := out.Write()
	if streamResult.IsErr() {
		return errors.New("the request body cannot be written")
	}
	stream := streamResult.Ok()
	if body != nil {
		buf := make([]byte, chunk)
		for {
			n, err := body.Read(buf)
			if n > 0 {
				if w := stream.BlockingWriteAndFlush(buf[:n]); w.IsErr() {
					stream.Drop()
					return streamError(w.Err())
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				stream.Drop()
				return err
			}
		}
	}
	// The stream is a child of the body: dropped before finishing it.
	stream.Drop()
	if finished := types.OutgoingBodyFinish(out, witTypes.None[*types.Fields]()); finished.IsErr() {
		return errorCode(finished.Err())
	}
	return nil
}

// await blocks until the host has the response.
func await(future *types.FutureIncomingResponse) (*types.IncomingResponse, error) {
	for {
		got := future.Get()
		if got.IsSome() {
			outer := got.Some()
			if outer.IsErr() {
				return nil, errors.New("the response was already taken")
			}
			inner := outer.Ok()
			if inner.IsErr() {
				return nil, errorCode(inner.Err())
			}
			return inner.Ok(), nil
		}
		pollable := future.Subscribe()
		pollable.Block()
		pollable.Drop()
	}
}

// response is the http.Response of the host's incoming response.
func response(req *http.Request, incoming *types.IncomingResponse) (*http.Response, error) {
	header := http.Header{}
	fields := incoming.Headers()
	for _, e := range fields.Entries() {
		header.Add(e.F0, string(e.F1))
	}
	fields.Drop()
	status := int(incoming.Status())
	consumed := incoming.Consume()
	if consumed.IsErr() {
		incoming.Drop()
		return nil, fmt.Errorf("cairnhttp: %s %s: the response body cannot be read", req.Method, req.URL)
	}
	body := consumed.Ok()
	stream := body.Stream()
	if stream.IsErr() {
		body.Drop()
		incoming.Drop()
		return nil, fmt.Errorf("cairnhttp: %s %s: the response body cannot be read", req.Method, req.URL)
	}
	length := int64(-1)
	if cl := header.Get("Content-Length"); cl != "" {
		fmt.Sscan(cl, &length)
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          &bodyReader{stream: stream.Ok(), body: body, response: incoming},
		ContentLength: length,
		Request:       req,
	}, nil
}

// bodyReader streams a response body from the host.
type bodyReader struct {
	stream   *streams.InputStream
	body     *types.IncomingBody
	response *types.IncomingResponse
	done     bool
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	got := b.stream.BlockingRead(uint64(len(p)))
	if got.IsErr() {
		e := got.Err()
		if e.Tag() == streams.StreamError_Closed {
			b.done = true
			return 0, io.EOF
		}
		return 0, streamError(e)
	}
	return copy(p, got.Ok()), nil
}

// Close drops the host's resources: the stream, then its body, then the
// response.
func (b *bodyReader) Close() error {
	if b.stream != nil {
		b.stream.Drop()
		b.body.Drop()
		b.response.Drop()
		b.stream = nil
	}
	return nil
}

func streamError(e streams.StreamError) error {
	if e.Tag() == streams.StreamError_Closed {
		return errors.New("the stream was closed")
	}
	failure := e.LastOperationFailed()
	defer failure.Drop()
	if code := types.HttpErrorCode(failure); code.IsSome() {
		return errorCode(code.Some())
	}
	return errors.New(failure.ToDebugString())
}

// requestError says what failed, for the provider's diagnostic.
func requestError(req *http.Request, err error) error {
	return fmt.Errorf("%s %s: %w", req.Method, req.URL.Redacted(), err)
}

// errorCode is a wasi:http error as a Go error.
func errorCode(code types.ErrorCode) error {
	tag := code.Tag()
	if tag == types.ErrorCode_HttpRequestDenied {
		return errors.New("the sandbox denied the request (the origin is not granted: add it to the provider's sandbox block, `http { url = \"…\" }`)")
	}
	if tag == types.ErrorCode_InternalError {
		if msg := code.InternalError(); msg.IsSome() {
			return fmt.Errorf("the host's HTTP client failed: %s", msg.Some())
		}
	}
	if int(tag) < len(errorNames) {
		return errors.New(errorNames[tag])
	}
	return fmt.Errorf("wasi:http error %d", tag)
}

func headerError(e types.HeaderError) string {
	switch e.Tag() {
	case types.HeaderError_InvalidSyntax:
		return "invalid syntax"
	case types.HeaderError_Forbidden:
		return "forbidden"
	}
	return "immutable"
}

// errorNames are wasi:http's error codes, in the WIT's order, as messages.
var errorNames = [...]string{
	"DNS timeout", "DNS error", "destination not found", "destination unavailable",
	"destination IP prohibited", "destination IP unroutable", "connection refused",
	"connection terminated", "connection timeout", "connection read timeout",
	"connection write timeout", "connection limit reached", "TLS protocol error",
	"TLS certificate error", "TLS alert received", "HTTP request denied",
	"HTTP request length required", "HTTP request body size", "HTTP request method invalid",
	"HTTP request URI invalid", "HTTP request URI too long", "HTTP request header section size",
	"HTTP request header size", "HTTP request trailer section size", "HTTP request trailer size",
	"HTTP response incomplete", "HTTP response header section size", "HTTP response header size",
	"HTTP response body size", "HTTP response trailer section size", "HTTP response trailer size",
	"HTTP response transfer coding", "HTTP response content coding", "HTTP response timeout",
	"HTTP upgrade failed", "HTTP protocol error", "loop detected", "configuration error",
	"internal error",
}
