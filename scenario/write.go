package scenario

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/brigadesim/brigade/hwmodel"
	"github.com/brigadesim/brigade/results"
	"github.com/brigadesim/brigade/runner"
	"github.com/brigadesim/brigade/workloads"
)

// WriteResults writes the setups' results folder to dir whole
// (results.WriteFolder): the files runner.Files names, each setup a
// policy row labelled by its name, and run.json naming the scenario file
// and the inputs it read. command is the command line, for run.json.
func (r *Result) WriteResults(dir string, command []string) error {
	f := r.File
	in, err := r.inputs()
	if err != nil {
		return err
	}
	if r.Serving != nil {
		return r.Serving.WriteFolder(dir, true, results.RunInfo{Command: command, Inputs: in})
	}
	return results.WriteFolder(dir, func(tmp string) error {
		files := runner.Files
		if r.Plan != nil {
			var err error
			if files, err = r.Plan.WriteFiles(tmp, "png", "svg"); err != nil {
				return err
			}
		} else if err := runner.WriteFiles(tmp, r.Runs(), nil); err != nil {
			return err
		}
		return results.WriteRunJSON(filepath.Join(tmp, "run.json"), results.RunInfo{
			Seed: f.Seed, Command: command, Inputs: in, Files: files,
		})
	})
}

// inputs are the files the run read, for run.json: the scenario file, its
// trace, and the cluster spec files and Kueue manifests its setups name.
func (r *Result) inputs() ([]results.InputFile, error) {
	f := r.File
	var in results.Inputs
	if err := in.AddFile("scenario", f.path); err != nil {
		return nil, err
	}
	if f.Serving != "" {
		if err := in.AddFile("experiment", f.resolve(f.Serving)); err != nil {
			return nil, err
		}
		return in, nil
	}
	if f.Workload.Embedded {
		in = append(in, results.InputFile{Role: "trace", Path: workloads.DefaultFile, Embedded: true, SHA256: workloads.DefaultSHA256()})
	}
	if f.Workload.Trace != "" {
		if err := in.AddFile("trace", f.resolve(f.Workload.Trace)); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, s := range f.setups() {
		if f.Plan != nil {
			break // a plan builds its own clusters
		}
		if s.Kueue != "" && !seen["kueue:"+s.Kueue] {
			seen["kueue:"+s.Kueue] = true
			if err := in.AddFile("kueue", f.resolve(s.Kueue)); err != nil {
				return nil, err
			}
		}
		if seen[s.Cluster] {
			continue
		}
		seen[s.Cluster] = true
		if _, ok := hwmodel.Preset(s.Cluster); ok {
			in = append(in, results.InputFile{Role: "cluster", Path: s.Cluster, Embedded: true})
		} else if err := in.AddFile("cluster", f.resolve(s.Cluster)); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// PagePath and PlotPath are where the file's page and plot go (relative
// to the scenario file's folder as written in it); "" when it names none.
func (f *File) PagePath() string { return f.resolve(f.Page) }
func (f *File) PlotPath() string { return f.resolve(f.Plot) }

// A PageFile is one file a page consists of: the Markdown page, or a
// plot it shows.
type PageFile struct {
	Path string
	Data []byte
}

// Page renders the file's page and the plots it shows, each with the
// path the file names for it. command is how the page says to run the
// file.
func (r *Result) Page(command string) ([]PageFile, error) {
	if r.File.PagePath() == "" {
		return nil, nil
	}
	var b bytes.Buffer
	plots, links, err := r.plots()
	if err != nil {
		return nil, err
	}
	if err := r.Markdown(&b, command, links); err != nil {
		return nil, err
	}
	return append([]PageFile{{Path: r.File.PagePath(), Data: b.Bytes()}}, plots...), nil
}

// plots renders the page's plots and says how the page links to them:
// the file's charts or its plan's plot at PlotPath, or a serving
// experiment's figures beside it, named PlotPath's stem and theirs.
func (r *Result) plots() ([]PageFile, []string, error) {
	f := r.File
	if f.Plot == "" {
		return nil, nil, nil
	}
	var files []PageFile
	if r.Serving != nil {
		figs, err := r.servingPNGs()
		if err != nil {
			return nil, nil, err
		}
		stem := strings.TrimSuffix(f.PlotPath(), filepath.Ext(f.PlotPath()))
		for _, fig := range figs {
			files = append(files, PageFile{Path: stem + "-" + fig.Path, Data: fig.Data})
		}
	} else if len(f.Charts) > 0 || r.Plan != nil {
		png, err := r.PNG()
		if err != nil {
			return nil, nil, err
		}
		files = append(files, PageFile{Path: f.PlotPath(), Data: png})
	}
	links := make([]string, len(files))
	for i, x := range files {
		links[i] = relLink(x.Path, f.PagePath())
	}
	return files, links, nil
}

// WritePage writes the page and plots the file names, each replaced
// atomically, so that a failed write leaves the earlier ones. It returns
// the paths written.
func (r *Result) WritePage(command string) ([]string, error) {
	files, err := r.Page(command)
	if err != nil {
		return nil, err
	}
	var wrote []string
	for _, x := range files {
		if err := results.AtomicWriteFile(x.Path, func(w io.Writer) error { _, err := w.Write(x.Data); return err }); err != nil {
			return wrote, err
		}
		wrote = append(wrote, x.Path)
	}
	return wrote, nil
}

// StalePages compares the page and plots the file names with what this
// result renders, and returns the paths that are missing or differ.
func (r *Result) StalePages(command string) ([]string, error) {
	files, err := r.Page(command)
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, x := range files {
		if old, err := os.ReadFile(x.Path); err != nil || !bytes.Equal(old, x.Data) {
			stale = append(stale, x.Path)
		}
	}
	return stale, nil
}
