package results

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"
)

// JobFiles writes jobs.parquet, attempts.parquet and jobs.csv into a
// folder being written (WriteFolder's), one policy's records at a time
// as each run makes them, so that no run's records need be held until
// the folder is written. The files are byte for byte those
// WriteJobsParquet, WriteAttemptsParquet and WriteJobsCSV write of the
// same records added in the same order: each file's rows are the
// policies' in order, and a Parquet writer cuts pages by their size,
// not by the calls that fill them, and keeps its pages where it is told,
// here in temporary files until Close writes them out.
//
// The files are written in place: the folder is the staging folder that
// WriteFolder swaps in whole or removes, which makes them atomic.
type JobFiles struct {
	files    []*os.File
	bufs     []*bufio.Writer
	jobs     *jobParquetRows
	attempts *parquetRows[AttemptRow]
	csv      *csvRows
	err      error
}

// CreateJobFiles starts dir's jobs.parquet, attempts.parquet and jobs.csv.
func CreateJobFiles(dir string) (*JobFiles, error) {
	f := &JobFiles{}
	var ws []io.Writer
	for _, name := range []string{"jobs.parquet", "attempts.parquet", "jobs.csv"} {
		file, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			f.abort()
			return nil, fmt.Errorf("write %s: %w", name, err)
		}
		b := bufio.NewWriterSize(file, 64<<10)
		f.files, f.bufs, ws = append(f.files, file), append(f.bufs, b), append(ws, b)
	}
	// A Parquet file of one row group holds every column's compressed
	// pages until its footer: they wait in temporary files in dir (one a
	// column, removed as the file is written), not in memory.
	pages := func(name string) parquet.WriterOption {
		return parquet.ColumnPageBuffers(parquet.NewFileBufferPool(dir, "."+name+".pages-*"))
	}
	f.jobs = newJobParquetRows(ws[0], pages("jobs.parquet"))
	f.attempts = newParquetRows[AttemptRow](ws[1], pages("attempts.parquet"))
	f.csv = newCSVRows(ws[2])
	f.csv.header(JobsCSVHeader)
	return f, nil
}

// Add appends r's rows to the three files. A policy's records may come in
// several Adds, in order; the next policy's follow them.
func (f *JobFiles) Add(r PolicyJobs) error {
	if f.err != nil {
		return f.err
	}
	if err := f.jobs.add(r); err != nil {
		f.err = fmt.Errorf("write jobs.parquet: %w", err)
		return f.err
	}
	if err := eachAttemptRow([]PolicyJobs{r}, f.attempts.add); err != nil {
		f.err = fmt.Errorf("write attempts.parquet: %w", err)
		return f.err
	}
	jobsCSVRows(f.csv, r)
	return nil
}

// Close ends the three files (the Parquet footers, the last rows), writes
// them out, syncs them and closes them; call it once, also after an error. After an error the files are closed
// and left incomplete, for WriteFolder to remove with the folder.
func (f *JobFiles) Close() error {
	err := f.err
	steps := []func() error{f.jobs.close, f.attempts.close, f.csv.close}
	for k := range f.files {
		if err == nil {
			if err = steps[k](); err == nil {
				err = f.bufs[k].Flush()
			}
			if err == nil {
				err = f.files[k].Sync()
			}
			if err == nil {
				err = f.files[k].Chmod(0o644) // as AtomicWriteFile's, whatever the umask
			}
			if err != nil {
				err = fmt.Errorf("write %s: %w", f.files[k].Name(), err)
			}
		}
		err = errors.Join(err, f.files[k].Close())
	}
	f.files = nil
	return err
}

// abort closes what was opened.
func (f *JobFiles) abort() {
	for _, file := range f.files {
		_ = file.Close()
	}
	f.files = nil
}
