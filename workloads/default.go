package workloads

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

//go:embed data/philly-default.csv
var phillyDefault []byte

// DefaultName describes the workload that Default returns.
const DefaultName = "philly-default: 3,621 jobs of the Microsoft Philly trace (Pollux philly.csv) submitted from 2017-10-16 00:00 to 2017-10-18 00:00 UTC"

// DefaultFile is the name Default's jobs carry in Job.Source and errors.
const DefaultFile = "philly-default.csv"

// Default reads the embedded default workload: a two-day cut of the Philly
// trace (see data/README.md for how it was made), read with ReadPhilly, so
// submit times start at 0 and tenants are Philly's virtual clusters. Each
// call returns a fresh Workload.
func Default() (*Workload, error) {
	return ReadPhilly(bytes.NewReader(phillyDefault), DefaultFile)
}

// DefaultSHA256 is the hex sha256 of the embedded default trace's bytes
// (data/philly-default.csv), for run.json.
func DefaultSHA256() string {
	s := sha256.Sum256(phillyDefault)
	return hex.EncodeToString(s[:])
}
