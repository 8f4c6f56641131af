package live

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// State is a live job's state in the store.
type State string

// The states a job record moves through. Running is written (and fsynced)
// before the process is launched; its PID follows once known.
const (
	Queued    State = "queued"
	Running   State = "running"
	Succeeded State = "succeeded"
	Failed    State = "failed"
)

// Record is one job as the store keeps it.
type Record struct {
	ID      int32   `json:"id"`
	Spec    JobSpec `json:"spec"`
	State   State   `json:"state"`
	Attempt int     `json:"attempt"` // attempts started so far (the running one included)
	Submit  int64   `json:"submit"`  // run time, µs
	Queued  int64   `json:"queued"`  // run time, µs, when it last entered the queue
	Start   int64   `json:"start"`   // run time, µs, of the current/last attempt
	End     int64   `json:"end"`     // run time, µs, when it ended (terminal states)
	GPUs    []int   `json:"gpus"`    // GPU indices of the current/last attempt
	Milli   int32   `json:"milli"`   // per GPU
	// MIGInstance is k+1 when the attempt runs on MIG instance k of its
	// GPU (the order of the GPU's discovered instances); 0 otherwise.
	MIGInstance int    `json:"mig_instance,omitempty"`
	PID         int    `json:"pid"`      // 0 until known
	PIDStart    uint64 `json:"pidstart"` // /proc/<pid>/stat starttime, guards against pid reuse
	Exit        int    `json:"exit"`     // exit code of the last attempt; -1 unknown
	Reason      string `json:"reason,omitempty"`
	Runs        int    `json:"runs"` // processes launched, over all attempts (tests check it)
	// Preempting is set when the policy preempted the running attempt:
	// its processes are being stopped, and its end goes back to the
	// queue as preempted, whatever its exit status. Preemptions counts
	// the attempts that ended so, which spend no retry.
	Preempting bool `json:"preempting,omitempty"`
	// DepFailed: the job failed because a dependency failed.
	DepFailed bool `json:"dep_failed,omitempty"`
	// Granted is how many retries the deadline-aware rule granted at the
	// job's first failure (hwmodel.DeadlineAttempts); 0 before it.
	Granted int `json:"granted,omitempty"`
	// DeadlineMissed: the deadline-aware rule gave the job up.
	DeadlineMissed bool `json:"deadline_missed,omitempty"`
	Preemptions    int  `json:"preemptions,omitempty"`
	// ExitFile is the absolute path of the current/last attempt's exit
	// file (exitWrapper), Boot the boot id under which it was launched;
	// records of older versions have neither.
	ExitFile string `json:"exit_file,omitempty"`
	Boot     string `json:"boot,omitempty"`
	// NotBefore is the run time (µs) before which a queued job is not
	// offered to the policy: its retry back-off (0: none).
	NotBefore int64 `json:"not_before,omitempty"`
	// Attempts is the history of the attempts that ended, in order, each
	// appended by finish. State files written before it existed lack it
	// (Export then rebuilds the last attempt from the fields above).
	Attempts []AttemptRecord `json:"attempts,omitempty"`
}

// AttemptRecord is one ended attempt of a job: run times in µs, the GPU
// indices and per-GPU share it held, its exit code (-1 unknown) and why it
// ended when the exit code does not say ("" for a plain exit).
type AttemptRecord struct {
	Queued int64  `json:"queued"` // when the job entered the queue before this attempt
	Start  int64  `json:"start"`
	End    int64  `json:"end"`
	GPUs   []int  `json:"gpus,omitempty"`
	Milli  int32  `json:"milli,omitempty"`
	Exit   int    `json:"exit"`
	Reason string `json:"reason,omitempty"`
	// Preempted: the policy stopped this attempt.
	Preempted bool `json:"preempted,omitempty"`
}

var (
	bJobs = []byte("jobs")
	bMeta = []byte("meta")
)

type store struct {
	db *bolt.DB
}

// openStore opens (or creates) a state file. A damaged one (truncated, or
// pages bbolt cannot read) is an error naming the file: bbolt maps the file
// into memory and trusts it, so a truncated file would otherwise crash the
// process on a fault (SIGBUS) or a panic in bbolt.
func openStore(path string) (*store, error) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		if err := checkSize(path, fi.Size()); err != nil {
			return nil, err
		}
	}
	return openChecked(path)
}

// checkSize compares the file's size with the end of the pages its
// database refers to, opening it read-only: that reads the meta pages
// only (bbolt loads the free list, which a truncated file may have lost,
// only for writing).
func checkSize(path string, size int64) error {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second, ReadOnly: true})
	if err != nil {
		return openError(path, err)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		if size < tx.Size() {
			return damaged(path, fmt.Errorf("truncated: %d bytes, its pages reach %d", size, tx.Size()))
		}
		return nil
	})
}

func openError(path string, err error) error {
	if errors.Is(err, berrors.ErrTimeout) {
		return fmt.Errorf("open state %s: %w (is another brigade live using it?)", path, err)
	}
	if fi, serr := os.Stat(path); serr == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
		return damaged(path, err)
	}
	return fmt.Errorf("open state %s: %w", path, err)
}

// openChecked opens the store and reads every page once, turning a fault
// or a bbolt panic on pages that checkSize could not vouch for into an
// error. (After a panic inside bolt.Open its mapping, and with it the file
// lock, stays until the process exits: the error ends the process anyway.)
func openChecked(path string) (s *store, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var db *bolt.DB
	defer func() {
		if p := recover(); p != nil {
			if db != nil {
				db.Close()
			}
			s, err = nil, damaged(path, fmt.Errorf("%v", p))
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, openError(path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bJobs); err != nil {
			return err
		}
		if _, err := tx.CreateBucketIfNotExists(bMeta); err != nil {
			return err
		}
		for _, b := range [][]byte{bJobs, bMeta} {
			if err := tx.Bucket(b).ForEach(func(k, v []byte) error { return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &store{db: db}, nil
}

// damaged is the error for a state file bbolt cannot use.
func damaged(path string, err error) error {
	return fmt.Errorf("state file %s is damaged (%v): restore it from a copy, or move it away to start afresh (its jobs are then forgotten)", path, err)
}

func key(id int32) []byte {
	var k [4]byte
	binary.BigEndian.PutUint32(k[:], uint32(id))
	return k[:]
}

// meta returns the value of a meta key, setting it to def when absent.
func (s *store) meta(name string, def []byte) ([]byte, error) {
	var out []byte
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bMeta)
		if v := b.Get([]byte(name)); v != nil {
			out = append([]byte(nil), v...)
			return nil
		}
		out = def
		return b.Put([]byte(name), def)
	})
	return out, err
}

// getMeta returns a meta key's value, nil when absent.
func (s *store) getMeta(name string) ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bMeta).Get([]byte(name)); v != nil {
			out = append([]byte(nil), v...)
		}
		return nil
	})
	return out, err
}

// setMeta sets a meta key, replacing any value.
func (s *store) setMeta(name string, v []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bMeta).Put([]byte(name), v) })
}

// put writes records in one transaction; bbolt fsyncs on commit.
func (s *store) put(recs ...*Record) error {
	if len(recs) == 0 {
		return nil
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bJobs)
		for _, r := range recs {
			v, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if err := b.Put(key(r.ID), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// All returns every record in ID order.
func (s *store) all() ([]*Record, error) {
	var out []*Record
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bJobs).ForEach(func(k, v []byte) error {
			r := new(Record)
			if err := json.Unmarshal(v, r); err != nil {
				return fmt.Errorf("job %x: %w", k, err)
			}
			out = append(out, r)
			return nil
		})
	})
	return out, err
}

// ReadState returns every job record of a state file (for tests and tools).
func ReadState(path string) ([]*Record, error) {
	s, err := openStore(path)
	if err != nil {
		return nil, err
	}
	defer s.db.Close()
	return s.all()
}
