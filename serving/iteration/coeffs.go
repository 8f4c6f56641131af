package iteration

import (
	"fmt"

	"github.com/brigadesim/brigade/config"
)

// Coeffs are BLIS's "trained-physics" coefficients (its defaults.yaml,
// trained_physics_coefficients): three fixed overheads in µs and eleven
// roofline corrections.
//
//   - Alpha[0]: from arrival to the replica's wait queue (HTTP parsing,
//     validation); Alpha[1]: once per request after its last token;
//     Alpha[2]: per output token (detokenisation, streaming), added to
//     every step a request takes a token in.
//   - Beta[0] prefill compute, Beta[1] decode compute, Beta[2] weight
//     loading, Beta[3] tensor-parallel all-reduce, Beta[4] µs per layer,
//     Beta[5] µs per request in the step, Beta[6] µs per step, Beta[7] µs
//     per MoE layer (interleaved MoE only), Beta[8] prefill KV write,
//     Beta[9] decode KV read, Beta[10] MoE all-to-all.
type Coeffs struct {
	Alpha [3]float64
	Beta  [11]float64
	// SplitPrefill and SplitDecode: with 9 (10) or more betas the prefill
	// (decode) term is Beta[0]·compute + Beta[8]·KV (Beta[1]·compute +
	// Beta[9]·KV); with fewer it is the roofline max(compute, KV) times
	// Beta[0] (Beta[1]).
	SplitPrefill, SplitDecode bool
	// Betas is how many betas the file gave (7 to 11; 0: 11), so that a
	// calibrated file is written in the same shape.
	Betas int
}

// ReadCoeffs reads the trained_physics_coefficients section of a
// BLIS-style defaults.yaml; the rest of the file is ignored.
func ReadCoeffs(path string) (Coeffs, error) {
	data, err := config.ReadFile(path, "latency coefficients", config.MaxFileBytes)
	if err != nil {
		return Coeffs{}, err
	}
	return ParseCoeffs(data, path)
}

// ParseCoeffs reads the text of a coefficients file; file names it in
// errors.
func ParseCoeffs(data []byte, file string) (Coeffs, error) {
	e := config.NewErrors(file)
	root, ok := config.Parse(data, e)
	if !ok {
		return Coeffs{}, e.Err()
	}
	sec, ok := root.Field("trained_physics_coefficients")
	if !ok || !sec.IsMapping() {
		e.Add("trained_physics_coefficients", "missing; want a mapping with alpha_coeffs (3 numbers) and beta_coeffs (7 to 11 numbers)")
		return Coeffs{}, e.Err()
	}
	var raw struct {
		Alpha []float64 `json:"alpha_coeffs" config:"required"`
		Beta  []float64 `json:"beta_coeffs" config:"required"`
	}
	// Strict inside the section (a misspelt key is an error); the rest of
	// the file is BLIS's own business.
	sec.Decode(&raw)
	if e.Count() > 0 {
		return Coeffs{}, e.Err()
	}
	var c Coeffs
	if len(raw.Alpha) != 3 {
		e.Add("trained_physics_coefficients.alpha_coeffs", "want 3 numbers (queueing, post-decode, per output token µs), got %d", len(raw.Alpha))
	}
	if len(raw.Beta) < 7 || len(raw.Beta) > 11 {
		e.Add("trained_physics_coefficients.beta_coeffs", "want 7 to 11 numbers, got %d", len(raw.Beta))
	}
	for i, b := range append(append([]float64{}, raw.Alpha...), raw.Beta...) {
		if b < 0 {
			e.Add("trained_physics_coefficients", "coefficient %d is %g; want ≥ 0", i, b)
		}
	}
	if e.Count() > 0 {
		return Coeffs{}, e.Err()
	}
	copy(c.Alpha[:], raw.Alpha)
	copy(c.Beta[:], raw.Beta)
	if len(raw.Beta) < 11 {
		c.Beta[10] = c.Beta[3] // the all-to-all runs over the all-reduce's fabric
	}
	c.SplitPrefill = len(raw.Beta) >= 9
	c.SplitDecode = len(raw.Beta) >= 10
	c.Betas = len(raw.Beta)
	return c, nil
}

func (c Coeffs) String() string {
	return fmt.Sprintf("alpha %v beta %v", c.Alpha, c.Beta)
}
