package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ErrPrometheusAPI is wrapped by the errors of Prometheus's query methods
// when the server answers with an error status (a bad expression, say).
var ErrPrometheusAPI = errors.New("testenv: prometheus API error")

// Sample is one series of an instant query's result: its labels (nil for a
// scalar) and value (NaN and ±Inf included).
type Sample struct {
	Metric map[string]string
	Value  float64
}

// Query evaluates expr at time at (now when zero) through /api/v1/query and
// returns the resulting vector, or one Sample for a scalar. Errors name the
// expression; a server-side error wraps ErrPrometheusAPI.
func (p *Prometheus) Query(ctx context.Context, expr string, at time.Time) ([]Sample, error) {
	q := url.Values{"query": {expr}}
	if !at.IsZero() {
		q.Set("time", strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64))
	}
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := p.get(ctx, "/api/v1/query?"+q.Encode(), &data); err != nil {
		return nil, fmt.Errorf("query %q: %w", expr, err)
	}
	switch data.ResultType {
	case "vector":
		var series []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(data.Result, &series); err != nil {
			return nil, fmt.Errorf("query %q: decode vector: %w", expr, err)
		}
		out := make([]Sample, 0, len(series))
		for _, s := range series {
			v, err := sampleValue(s.Value)
			if err != nil {
				return nil, fmt.Errorf("query %q: %w", expr, err)
			}
			out = append(out, Sample{Metric: s.Metric, Value: v})
		}
		return out, nil
	case "scalar":
		var pair [2]any
		if err := json.Unmarshal(data.Result, &pair); err != nil {
			return nil, fmt.Errorf("query %q: decode scalar: %w", expr, err)
		}
		v, err := sampleValue(pair)
		if err != nil {
			return nil, fmt.Errorf("query %q: %w", expr, err)
		}
		return []Sample{{Value: v}}, nil
	}
	return nil, fmt.Errorf("query %q: result type %q, want a vector or a scalar", expr, data.ResultType)
}

// sampleValue decodes a [timestamp, "value"] pair.
func sampleValue(pair [2]any) (float64, error) {
	s, ok := pair[1].(string)
	if !ok {
		return 0, fmt.Errorf("sample value %v is not a string", pair[1])
	}
	return strconv.ParseFloat(s, 64)
}

// Rule is an alerting or recording rule as /api/v1/rules reports it.
type Rule struct {
	Group     string // the rule group's name
	Name      string
	Type      string // "alerting" or "recording"
	Query     string
	Health    string // "ok", "err" or "unknown" (not evaluated yet)
	LastError string
	State     string // alerting rules: "inactive", "pending" or "firing"
}

// Rules returns every loaded rule with its last evaluation's health.
func (p *Prometheus) Rules(ctx context.Context) ([]Rule, error) {
	var data struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Name      string `json:"name"`
				Type      string `json:"type"`
				Query     string `json:"query"`
				Health    string `json:"health"`
				LastError string `json:"lastError"`
				State     string `json:"state"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := p.get(ctx, "/api/v1/rules", &data); err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	var out []Rule
	for _, g := range data.Groups {
		for _, r := range g.Rules {
			out = append(out, Rule{Group: g.Name, Name: r.Name, Type: r.Type, Query: r.Query,
				Health: r.Health, LastError: r.LastError, State: r.State})
		}
	}
	return out, nil
}

// Target is a scrape target as /api/v1/targets reports it.
type Target struct {
	Job       string
	ScrapeURL string
	Health    string // "up", "down" or "unknown" (not scraped yet)
	LastError string
}

// Targets returns the active scrape targets.
func (p *Prometheus) Targets(ctx context.Context) ([]Target, error) {
	var data struct {
		Active []struct {
			ScrapePool string `json:"scrapePool"`
			ScrapeURL  string `json:"scrapeUrl"`
			Health     string `json:"health"`
			LastError  string `json:"lastError"`
		} `json:"activeTargets"`
	}
	if err := p.get(ctx, "/api/v1/targets?state=active", &data); err != nil {
		return nil, fmt.Errorf("targets: %w", err)
	}
	out := make([]Target, 0, len(data.Active))
	for _, a := range data.Active {
		out = append(out, Target{Job: a.ScrapePool, ScrapeURL: a.ScrapeURL, Health: a.Health, LastError: a.LastError})
	}
	return out, nil
}

// get fetches an API path and decodes the data of its JSON envelope into v.
func (p *Prometheus) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("%s: HTTP %d, not the API's JSON: %.200s", path, resp.StatusCode, body)
	}
	if env.Status != "success" {
		return fmt.Errorf("%w: %s: %s", ErrPrometheusAPI, env.ErrorType, env.Error)
	}
	return json.Unmarshal(env.Data, v)
}
