package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// client talks to the store: PUT, GET and DELETE of /items/<name>, JSON.
type client struct {
	endpoint string
	http     *http.Client
}

// item is an item as the store has it.
type item struct {
	ID       string            `json:"id,omitempty"`
	Name     string            `json:"name"`
	Value    string            `json:"value"`
	Size     int64             `json:"size"`
	Labels   map[string]string `json:"labels,omitempty"`
	Settings *itemSettings     `json:"settings,omitempty"`
	Rules    []itemRule        `json:"rules,omitempty"`
	Notes    []string          `json:"notes,omitempty"`
	Password string            `json:"password,omitempty"`
	// Secret is sent when the item is made and never read back.
	Secret   string `json:"secret,omitempty"`
	Revision int64  `json:"revision,omitempty"`
}

type itemSettings struct {
	Mode    string `json:"mode"`
	Retries *int64 `json:"retries,omitempty"`
}

type itemRule struct {
	Port     int64  `json:"port"`
	Protocol string `json:"protocol"`
}

// errNotFound is the store's 404.
var errNotFound = fmt.Errorf("not found")

func (c *client) url(name string) string {
	return c.endpoint + "/items/" + url.PathEscape(name)
}

// put writes an item; ifMatch (the revision the provider last saw, kept in
// private state) goes in an If-Match header when it is not empty.
func (c *client) put(it *item, ifMatch string) (*item, error) {
	body, err := json.Marshal(it)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPut, c.url(it.Name), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	return c.do(req)
}

func (c *client) get(name string) (*item, error) {
	req, err := http.NewRequest(http.MethodGet, c.url(name), nil)
	if err != nil {
		return nil, err
	}
	return c.do(req)
}

func (c *client) delete(name string) error {
	req, err := http.NewRequest(http.MethodDelete, c.url(name), nil)
	if err != nil {
		return err
	}
	_, err = c.do(req)
	if err == errNotFound {
		return nil
	}
	return err
}

func (c *client) do(req *http.Request) (*item, error) {
	var it item
	found, err := c.send(req, &it, "an item")
	if err != nil || !found {
		return nil, err
	}
	return &it, nil
}

// send sends req and decodes the store's JSON answer into out (what is
// named in errors): false for an answer with no content.
func (c *client) send(req *http.Request, out any, what string) (bool, error) {
	if c.endpoint == "" {
		return false, fmt.Errorf("the provider's endpoint is not set")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return false, fmt.Errorf("cannot reach the store at %s: %w", c.endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, fmt.Errorf("reading the store's answer to %s %s: %w", req.Method, req.URL.Path, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return false, errNotFound
	case resp.StatusCode == http.StatusNoContent:
		return false, nil
	case resp.StatusCode >= 300:
		return false, fmt.Errorf("the store answered %s %s with %s: %s", req.Method, req.URL.Path, resp.Status, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return false, fmt.Errorf("the store's answer to %s %s is not %s: %w", req.Method, req.URL.Path, what, err)
	}
	return true, nil
}

// lease is a lease as the store hands it out: POST /leases with the
// scope, POST /leases/<id>/renew, DELETE /leases/<id>.
type lease struct {
	ID    string `json:"id"`
	Scope string `json:"scope"`
	Token string `json:"token"`
}

func (c *client) openLease(scope string) (*lease, error) {
	body, err := json.Marshal(map[string]string{"scope": scope})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, c.endpoint+"/leases", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	var got lease
	if _, err := c.send(req, &got, "a lease"); err != nil {
		return nil, err
	}
	return &got, nil
}

func (c *client) renewLease(id string) error {
	req, err := http.NewRequest(http.MethodPost, c.endpoint+"/leases/"+url.PathEscape(id)+"/renew", nil)
	if err != nil {
		return err
	}
	var got lease
	_, err = c.send(req, &got, "a lease")
	return err
}

func (c *client) revokeLease(id string) error {
	req, err := http.NewRequest(http.MethodDelete, c.endpoint+"/leases/"+url.PathEscape(id), nil)
	if err != nil {
		return err
	}
	_, err = c.send(req, nil, "nothing")
	return err
}
