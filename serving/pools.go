package serving

import (
	"slices"

	"github.com/brigadesim/brigade/config"
	"github.com/brigadesim/brigade/hwmodel"
)

// Pool is one pool of a service's replicas: its own replica model (a
// low-latency pool with small batches beside a batch pool with large
// ones), bounds and autoscaler, behind the service's gateway settings
// (routing, health), GPU model and priority. Classes name the pool that
// serves them (Class.Pool); the engine runs each pool as a service of its
// own, named SERVICE/POOL in results, whose requests are drawn from the
// declared service's streams: a class's requests are the same whichever
// pool serves it. In an experiment file a pool's replica and bounds
// override the service's, and a pool without an autoscale section takes
// the service's.
type Pool struct {
	Name      string
	Replica   ReplicaModel
	Replicas  ReplicaBounds
	Autoscale *Autoscale // nil: a fixed count
}

// unit is one service as the engine runs it: a declared service without
// pools, or one pool of one. parent is the declared service's index and
// keys each class's index in it (the request streams' keys); total is
// the declared classes' weight, of which each class's share is taken.
type unit struct {
	spec   Service
	parent int
	keys   []int
	total  float64
}

// expand lists the services the engine runs, in the spec's order and
// each service's pools in theirs.
func expand(spec *Spec) []unit {
	var out []unit
	for si, sv := range spec.Services {
		var total float64
		for _, c := range sv.Classes {
			total += c.Weight
		}
		if len(sv.Pools) == 0 {
			keys := make([]int, len(sv.Classes))
			for k := range keys {
				keys[k] = k
			}
			out = append(out, unit{spec: sv, parent: si, keys: keys, total: total})
			continue
		}
		for pi, p := range sv.Pools {
			u := unit{spec: sv, parent: si, total: total}
			u.spec.Name = sv.Name + "/" + p.Name
			u.spec.Replica, u.spec.Replicas, u.spec.Autoscale = p.Replica, p.Replicas, p.Autoscale
			u.spec.Pools, u.spec.Classes = nil, nil
			for ci, c := range sv.Classes {
				if c.Pool == p.Name || (c.Pool == "" && pi == 0) {
					u.spec.Classes = append(u.spec.Classes, c)
					u.keys = append(u.keys, ci)
				}
			}
			out = append(out, u)
		}
	}
	return out
}

// checkPools reports what is wrong with a service's pools and its
// classes' pool names.
func (v *Service) checkPools(e *config.Errors, horizon hwmodel.Time) {
	if len(v.Pools) == 0 {
		for ci, c := range v.Classes {
			if c.Pool != "" {
				e.Index("classes", ci).Add("pool", "unknown pool %q: the service has no pools", c.Pool)
			}
		}
		return
	}
	if len(v.Pools) > maxClasses {
		e.Add("pools", "lists %d pools; at most %d are allowed", len(v.Pools), maxClasses)
	}
	if v.Arrivals.Trace != "" {
		e.Add("arrivals.trace", "a service with pools takes rate arrivals; a trace is read by a service without pools")
	}
	if len(v.Incidents) > 0 {
		e.Add("incidents", "an incident names a replica of one service; a service with pools takes none")
	}
	names := map[string]int{}
	for k := range v.Pools {
		p := &v.Pools[k]
		pe := e.Index("pools", k)
		switch {
		case p.Name == "":
			pe.Add("name", "want a name")
		case !validName(p.Name):
			pe.Add("name", "want letters, digits and . _ - + only (it names rows), got %q", p.Name)
		}
		if j, dup := names[p.Name]; dup && p.Name != "" {
			pe.Add("name", "%q is already the name of pools[%d]", p.Name, j)
		} else {
			names[p.Name] = k
		}
		checkReplica(pe, &p.Replica, p.Replicas)
		if it := p.Replica.Iteration; it != nil && (it.Model == "" || it.Hardware == "" || it.GPU == "" || it.Coefficients == "") {
			pe.Add("replica.iteration", "want model, hardware, gpu and coefficients (the service's replica has no iteration model to override)")
		}
		if h := v.Health.withDefaults(); v.Routing == PriorityLanes && v.priorityLevels() > 1 && h.LaneHeadroom >= p.Replica.MaxConcurrent && p.Replica.MaxConcurrent >= 1 {
			pe.Add("replica.max_concurrent", "want more than health.lane_headroom (%d) slots under priority lanes, got %d", h.LaneHeadroom, p.Replica.MaxConcurrent)
		}
		if p.Autoscale != nil {
			p.Autoscale.withDefaults().check(pe.In("autoscale"))
		}
	}
	served := make([]bool, len(v.Pools))
	for ci, c := range v.Classes {
		if c.Pool == "" {
			served[0] = true
			continue
		}
		k, ok := names[c.Pool]
		if !ok {
			e.Index("classes", ci).Add("pool", "unknown pool %q (the service's pools: %s)", c.Pool, poolNames(v.Pools))
			continue
		}
		served[k] = true
	}
	for k, ok := range served {
		if !ok && v.Pools[k].Name != "" {
			e.Index("pools", k).Add("name", "no class is served by pool %q (a class names it with pool: %s)", v.Pools[k].Name, v.Pools[k].Name)
		}
	}
}

func poolNames(pools []Pool) string {
	s := make([]string, len(pools))
	for k, p := range pools {
		s[k] = p.Name
	}
	return joinNames(s)
}

// hasAutoscale reports whether the service or one of its pools scales.
func (v *Service) hasAutoscale() bool {
	return v.Autoscale != nil || slices.ContainsFunc(v.Pools, func(p Pool) bool { return p.Autoscale != nil })
}

// The experiment file's pools: a pool's replica and iteration settings
// override the service's one by one, so they are pointers (absent: the
// service's).

type poolFile struct {
	Name      string           `json:"name" config:"required"`
	Replica   *poolReplicaFile `json:"replica"`
	Replicas  *boundsFile      `json:"replicas"`
	Autoscale *autoscaleFile   `json:"autoscale"`
}

type poolReplicaFile struct {
	PrefillTokensPerS  *float64      `json:"prefill_tokens_per_s"`
	DecodeTokensPerS   *float64      `json:"decode_tokens_per_s"`
	BatchSlowdown      *float64      `json:"batch_slowdown"`
	Jitter             *float64      `json:"jitter"`
	ContinuousBatching *bool         `json:"continuous_batching"`
	MaxConcurrent      *int          `json:"max_concurrent"`
	LoadTime           *duration     `json:"load_time"`
	Iteration          *poolIterFile `json:"iteration"`
}

// poolIterFile holds the engine settings a pool may change; the model,
// hardware and coefficients are the service's.
type poolIterFile struct {
	MaxNumSeqs  *int     `json:"max_num_seqs"`
	MaxBatched  *int     `json:"max_num_batched_tokens"`
	LongPrefill *int     `json:"long_prefill_token_threshold"`
	MemoryUtil  *float64 `json:"gpu_memory_utilization"`
	KVBlocks    *int64   `json:"kv_blocks"`
}

type stagePoolFile struct {
	Name        string    `json:"name" config:"required"`
	Workers     int       `json:"workers" config:"required"`
	ServiceTime *distFile `json:"service_time" config:"required"`
}

func (f *stagePoolFile) stagePool() StagePool {
	return StagePool{Name: f.Name, Workers: f.Workers, ServiceTime: f.ServiceTime.dist()}
}

// pool is the pool as the service s (already converted) declares it.
func (f *poolFile) pool(s *Service) Pool {
	p := Pool{Name: f.Name, Replica: s.Replica, Replicas: s.Replicas, Autoscale: s.Autoscale}
	if s.Autoscale != nil {
		a := *s.Autoscale
		p.Autoscale = &a
	}
	if r := f.Replica; r != nil {
		set(&p.Replica.PrefillTokensPerS, r.PrefillTokensPerS)
		set(&p.Replica.DecodeTokensPerS, r.DecodeTokensPerS)
		set(&p.Replica.BatchSlowdown, r.BatchSlowdown)
		set(&p.Replica.Jitter, r.Jitter)
		set(&p.Replica.ContinuousBatching, r.ContinuousBatching)
		set(&p.Replica.MaxConcurrent, r.MaxConcurrent)
		if r.LoadTime != nil {
			p.Replica.LoadTime = hwmodel.Time(*r.LoadTime)
		}
		if ri := r.Iteration; ri != nil {
			im := &IterationModel{}
			if base := s.Replica.Iteration; base != nil {
				im = base.settings()
			}
			set(&im.MaxSeqs, ri.MaxNumSeqs)
			set(&im.TokenBudget, ri.MaxBatched)
			set(&im.LongPrefill, ri.LongPrefill)
			set(&im.MemoryUtil, ri.MemoryUtil)
			set(&im.KVBlocks, ri.KVBlocks)
			p.Replica.Iteration = im
		}
	}
	if b := f.Replicas; b != nil {
		p.Replicas = ReplicaBounds{Initial: b.Initial, Min: b.Initial, Max: b.Initial}
		if b.Min != nil {
			p.Replicas.Min = *b.Min
		}
		if b.Max != nil {
			p.Replicas.Max = *b.Max
		}
	}
	if a := f.Autoscale; a != nil {
		as := Autoscale{Metric: a.Metric, Target: a.Target, Interval: hwmodel.Time(a.Interval), ScaleUpCooldown: hwmodel.Time(a.ScaleUpCooldown),
			ScaleDownCooldown: hwmodel.Time(a.ScaleDownCooldown), OnNoGPUs: a.OnNoGPUs}.withDefaults()
		p.Autoscale = &as
	}
	return p
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// settings is a fresh IterationModel with im's settings (not its built
// state: a pool that changes one builds its own).
func (im *IterationModel) settings() *IterationModel {
	return &IterationModel{Model: im.Model, Hardware: im.Hardware, Coefficients: im.Coefficients, GPU: im.GPU, TP: im.TP,
		MaxSeqs: im.MaxSeqs, TokenBudget: im.TokenBudget, LongPrefill: im.LongPrefill, BlockSize: im.BlockSize,
		MemoryUtil: im.MemoryUtil, KVBlocks: im.KVBlocks, MaxRequestTokens: im.MaxRequestTokens}
}
