package serving

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/brigadesim/brigade/results"
)

// jsonAlerts is a variant's alerts in serving_summary.json: per rule, the
// times it fired and its time firing; then every state change.
type jsonAlerts struct {
	Rules  []jsonAlertStat  `json:"rules"`
	Events []jsonAlertEvent `json:"events"`
}

type jsonAlertStat struct {
	Name    string `json:"name"`
	Fired   int    `json:"fired"`
	FiringS num    `json:"firing_s"`
}

type jsonAlertEvent struct {
	Alert   string `json:"alert"`
	Service string `json:"service"`
	Class   string `json:"class"`
	State   string `json:"state"`
	TimeS   num    `json:"time_s"`
	Value   num    `json:"value"`
}

// toJSONAlerts is r's alerts, nil when the experiment has none.
func toJSONAlerts(r *Result) *jsonAlerts {
	if len(r.AlertStats) == 0 {
		return nil
	}
	j := &jsonAlerts{Rules: []jsonAlertStat{}, Events: []jsonAlertEvent{}}
	for _, st := range r.AlertStats {
		j.Rules = append(j.Rules, jsonAlertStat{Name: st.Alert, Fired: st.Fired, FiringS: num(st.Firing.Seconds())})
	}
	for _, e := range r.Alerts {
		j.Events = append(j.Events, jsonAlertEvent{Alert: e.Alert, Service: e.Service, Class: e.Class, State: e.State,
			TimeS: num(e.At.Seconds()), Value: num(e.Value)})
	}
	return j
}

// AlertsHeader is alerts.csv's header.
var AlertsHeader = []string{"variant", "alert", "service", "class", "state", "time_s", "value"}

// WriteAlertsCSV writes alerts.csv: one row per alert state change
// (pending, firing, resolved, or inactive for a pending alert that
// cleared), per variant in time order; only the header when the
// experiment has no alerts, so that a results folder always has it.
func WriteAlertsCSV(w io.Writer, rs *RunSet) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(AlertsHeader); err != nil {
		return err
	}
	for _, v := range rs.Variants {
		for _, e := range v.Result.Alerts {
			if err := cw.Write([]string{v.Name, e.Alert, e.Service, e.Class, e.State, secs(e.At), fnum(e.Value)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// formatAlertTable writes, after the comparison table, how many times
// each alert fired per variant and how long it was firing; nothing when
// the experiment has no alerts.
func formatAlertTable(w io.Writer, rs *RunSet) error {
	has := false
	for _, v := range rs.Variants {
		has = has || len(v.Result.AlertStats) > 0
	}
	if !has {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nvariant\talert\tfired\tfiring")
	for _, v := range rs.Variants {
		for _, st := range v.Result.AlertStats {
			firing := "-"
			if st.Fired > 0 {
				firing = results.HumanDuration(st.Firing.Seconds())
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Name, st.Alert, strconv.Itoa(st.Fired), firing)
		}
	}
	return tw.Flush()
}
