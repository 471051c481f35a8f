// Package llm speaks the OpenAI-compatible chat-completions API
// (POST {base}/chat/completions) of a model endpoint the customer runs:
// Ollama, vLLM, llama.cpp's server, or a cloud endpoint they choose. It
// implements app.ChatModel: streaming replies (Server-Sent Events from the
// model) and tool calls. Connections go through the appliance's network
// policy, checked on the address actually dialed; proxies from the
// environment are not used and redirects are not followed.
package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// Config is a model endpoint.
type Config struct {
	// BaseURL is the API root, e.g. http://127.0.0.1:11434/v1; requests go
	// to BaseURL + "/chat/completions".
	BaseURL string
	Model   string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// Stream asks the model to stream its reply (default on).
	NoStream bool
}

// Client is an app.ChatModel over HTTP.
type Client struct {
	cfg    Config
	url    string
	client *http.Client
}

var _ app.ChatModel = (*Client)(nil)

// maxReply bounds a reply's body (non-streaming) and one streamed line.
const maxReply = 4 << 20

// New returns a client for cfg whose connections obey policy.
func New(cfg Config, policy *app.NetworkPolicy) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("assistant model base_url %q: must be an http or https URL", cfg.BaseURL)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("assistant model: name is required")
	}
	dialer := &net.Dialer{
		Timeout:   5 * time.Second,
		KeepAlive: 30 * time.Second,
		Control:   policy.DialControl("webhooks.allow_networks"),
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 0, // the caller's context bounds the whole answer
	}
	return &Client{cfg: cfg, url: u.String() + "/chat/completions", client: &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// The wire format.

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"function"`
}

type wireRequest struct {
	Model       string        `json:"model"`
	Messages    []wireMessage `json:"messages"`
	Tools       []wireTool    `json:"tools,omitempty"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	Stream      bool          `json:"stream"`
	Temperature float64       `json:"temperature"`
}

type wireChoice struct {
	Message      *wireMessage `json:"message"`
	Delta        *wireMessage `json:"delta"`
	FinishReason *string      `json:"finish_reason"`
}

type wireResponse struct {
	Choices []wireChoice `json:"choices"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func encodeRequest(model string, req app.ModelRequest, stream bool) ([]byte, error) {
	w := wireRequest{Model: model, MaxTokens: req.MaxTokens, Stream: stream, Temperature: 0}
	for _, m := range req.Messages {
		c := m.Content
		wm := wireMessage{Role: m.Role, Content: &c, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			wm.ToolCalls = append(wm.ToolCalls, wireToolCall{ID: tc.ID, Type: "function", Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments}})
		}
		w.Messages = append(w.Messages, wm)
	}
	for _, t := range req.Tools {
		var wt wireTool
		wt.Type = "function"
		wt.Function.Name, wt.Function.Description, wt.Function.Parameters = t.Name, t.Description, t.Parameters
		w.Tools = append(w.Tools, wt)
	}
	return json.Marshal(w)
}

// Chat sends one chat-completions request.
func (c *Client) Chat(ctx context.Context, req app.ModelRequest, onDelta func(string)) (*app.ModelReply, error) {
	stream := !c.cfg.NoStream
	body, err := encodeRequest(c.cfg.Model, req, stream)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	if stream {
		hr.Header.Set("Accept", "text/event-stream")
	}
	if c.cfg.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.client.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %v", app.ErrModelUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("%w: status %d", app.ErrModelUnavailable, resp.StatusCode)
	}
	var reply *app.ModelReply
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		reply, err = readStream(resp.Body, onDelta)
	} else {
		reply, err = readWhole(resp.Body, onDelta)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return reply, nil
}

// readWhole reads a non-streamed reply.
func readWhole(r io.Reader, onDelta func(string)) (*app.ModelReply, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxReply+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", app.ErrModelUnavailable, err)
	}
	if len(raw) > maxReply {
		return nil, fmt.Errorf("%w: reply larger than %d bytes", app.ErrModelReply, maxReply)
	}
	var w wireResponse
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("%w: %v", app.ErrModelReply, err)
	}
	if w.Error != nil {
		return nil, fmt.Errorf("%w: the endpoint reported an error", app.ErrModelUnavailable)
	}
	if len(w.Choices) == 0 || w.Choices[0].Message == nil {
		return nil, fmt.Errorf("%w: no choices", app.ErrModelReply)
	}
	m := w.Choices[0].Message
	out := &app.ModelReply{}
	if m.Content != nil {
		out.Content = *m.Content
	}
	if w.Choices[0].FinishReason != nil {
		out.FinishReason = *w.Choices[0].FinishReason
	}
	for _, tc := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, app.ModelToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if len(out.ToolCalls) == 0 && onDelta != nil {
		onDelta(out.Content)
	}
	return out, nil
}

// readStream reads a streamed reply: "data: {chunk}" lines until
// "data: [DONE]", text deltas passed on as they come, tool-call fragments
// joined by index.
func readStream(r io.Reader, onDelta func(string)) (*app.ModelReply, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxReply)
	out := &app.ModelReply{}
	var content strings.Builder
	calls := map[int]*app.ModelToolCall{}
	var order []int
	done, chunks := false, 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, ":") || strings.HasPrefix(line, "event:") {
			continue
		}
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			return nil, fmt.Errorf("%w: unexpected stream line", app.ErrModelReply)
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			done = true
			break
		}
		var w wireResponse
		if err := json.Unmarshal([]byte(data), &w); err != nil {
			return nil, fmt.Errorf("%w: %v", app.ErrModelReply, err)
		}
		if w.Error != nil {
			return nil, fmt.Errorf("%w: the endpoint reported an error", app.ErrModelUnavailable)
		}
		chunks++
		for _, ch := range w.Choices {
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				out.FinishReason = *ch.FinishReason
			}
			d := ch.Delta
			if d == nil {
				d = ch.Message
			}
			if d == nil {
				continue
			}
			if d.Content != nil && *d.Content != "" {
				content.WriteString(*d.Content)
				if onDelta != nil {
					onDelta(*d.Content)
				}
			}
			for i, tc := range d.ToolCalls {
				idx := i
				if tc.Index != nil {
					idx = *tc.Index
				}
				cur, ok := calls[idx]
				if !ok {
					cur = &app.ModelToolCall{}
					calls[idx] = cur
					order = append(order, idx)
				}
				if tc.ID != "" {
					cur.ID = tc.ID
				}
				cur.Name += tc.Function.Name
				cur.Arguments += tc.Function.Arguments
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", app.ErrModelUnavailable, err)
	}
	if !done && out.FinishReason == "" {
		return nil, fmt.Errorf("%w: the stream ended early", app.ErrModelReply)
	}
	if chunks == 0 {
		return nil, fmt.Errorf("%w: empty stream", app.ErrModelReply)
	}
	out.Content = content.String()
	for _, i := range order {
		out.ToolCalls = append(out.ToolCalls, *calls[i])
	}
	return out, nil
}
