package live

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
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
}

var (
	bJobs = []byte("jobs")
	bMeta = []byte("meta")
)

type store struct {
	db *bolt.DB
}

func openStore(path string) (*store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open state %s: %w (is another brigade live using it?)", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bJobs); err != nil {
			return err
		}
		_, err := tx.CreateBucketIfNotExists(bMeta)
		return err
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &store{db: db}, nil
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
