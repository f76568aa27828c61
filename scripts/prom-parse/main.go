// Usage: prom-parse [--version] < scrape.txt
//
// prom-parse reads one scrape in Prometheus's text exposition format on stdin and prints its
// metric families as JSON on stdout, parsed by the Prometheus project's own parser (expfmt), so
// the tests read histograms and labels as Prometheus would, not as Spur's code writes them.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// A bucket's bound as the format writes it: JSON has no +Inf.
type bucket struct {
	UpperBound string `json:"le"`
	Count      uint64 `json:"count"`
}

type series struct {
	Labels  map[string]string `json:"labels"`
	Value   *float64          `json:"value,omitempty"`
	Count   *uint64           `json:"count,omitempty"`
	Sum     *float64          `json:"sum,omitempty"`
	Buckets []bucket          `json:"buckets,omitempty"`
}

type family struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Series []series `json:"series"`
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println("prom-parse, github.com/prometheus/common/expfmt v0.74.0")
		return
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]family, 0, len(names))
	for _, name := range names {
		f := families[name]
		fam := family{Name: name, Type: f.GetType().String(), Series: []series{}}
		for _, m := range f.GetMetric() {
			fam.Series = append(fam.Series, toSeries(f.GetType(), m))
		}
		out = append(out, fam)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func toSeries(kind dto.MetricType, m *dto.Metric) series {
	s := series{Labels: map[string]string{}}
	for _, l := range m.GetLabel() {
		s.Labels[l.GetName()] = l.GetValue()
	}
	switch kind {
	case dto.MetricType_COUNTER:
		v := m.GetCounter().GetValue()
		s.Value = &v
	case dto.MetricType_GAUGE:
		v := m.GetGauge().GetValue()
		s.Value = &v
	case dto.MetricType_UNTYPED:
		v := m.GetUntyped().GetValue()
		s.Value = &v
	case dto.MetricType_HISTOGRAM:
		h := m.GetHistogram()
		count, sum := h.GetSampleCount(), h.GetSampleSum()
		s.Count, s.Sum = &count, &sum
		for _, b := range h.GetBucket() {
			s.Buckets = append(s.Buckets, bucket{UpperBound: model.FloatString(b.GetUpperBound()).String(), Count: b.GetCumulativeCount()})
		}
	case dto.MetricType_SUMMARY:
		sm := m.GetSummary()
		count, sum := sm.GetSampleCount(), sm.GetSampleSum()
		s.Count, s.Sum = &count, &sum
	}
	return s
}
