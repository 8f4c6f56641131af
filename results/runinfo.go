package results

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"runtime/debug"
)

// Version is Brigade's version as the binary was built: the main module's
// version from the build information (a release tag such as v0.4.0, a
// pseudo-version naming the commit, or "(devel)"), written in run.json
// and printed by brigade version. Revision is the VCS commit the binary
// was built from, with "+dirty" when the work tree had changes; "" when
// the build recorded none (go test, go run outside a checkout).
var Version, Revision = buildVersion()

func buildVersion() (version, revision string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)", ""
	}
	version = bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if revision != "" && modified {
		revision += "+dirty"
	}
	return version, revision
}

// RunInfo is run.json: what produced a results folder. It holds no
// timestamps or host names, so the same command line gives the same file.
type RunInfo struct {
	SchemaVersion  int    `json:"schema_version"`
	BrigadeVersion string `json:"brigade_version"`
	// VCSRevision is the commit the binary was built from (Revision);
	// absent when the build recorded none.
	VCSRevision string `json:"vcs_revision,omitempty"`
	Seed        uint64 `json:"seed"`
	// Command is the command line as given: the program name, then its
	// arguments.
	Command []string `json:"command"`
	// Inputs are the files the run read, in the order of the flags that
	// name them (see docs/results.md).
	Inputs []InputFile `json:"inputs"`
	// Files are the files the run wrote beside run.json.
	Files []string `json:"files"`
}

// InputFile is one input of a run. Role is the flag that named it, e.g.
// "trace"; Path is the path as given, or for an embedded input its name;
// Embedded says the data is built into the brigade binary (the embedded
// default trace, a cluster preset). SHA256 is the hex digest of the bytes
// read (a .gz file's compressed bytes); empty for a built-in preset that is
// not a file.
type InputFile struct {
	Role     string `json:"role"`
	Path     string `json:"path"`
	Embedded bool   `json:"embedded"`
	SHA256   string `json:"sha256"`
}

// SHA256Hex is the hex sha256 of b.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// FileInput describes the file at path as an input named by role.
func FileInput(role, path string) (InputFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return InputFile{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return InputFile{}, err
	}
	return InputFile{Role: role, Path: path, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// Inputs collects the files a run read, in the order it names them, for
// RunInfo.Inputs.
type Inputs []InputFile

// AddFile appends the file at path as an input named by role (FileInput).
func (in *Inputs) AddFile(role, path string) error {
	x, err := FileInput(role, path)
	if err == nil {
		*in = append(*in, x)
	}
	return err
}

// WriteRunJSON writes info to path, atomically, as indented JSON with
// SchemaVersion and Version filled in. Nil slices are written as [].
func WriteRunJSON(path string, info RunInfo) error {
	info.SchemaVersion = SchemaVersion
	info.BrigadeVersion, info.VCSRevision = Version, Revision
	if info.Command == nil {
		info.Command = []string{}
	}
	if info.Inputs == nil {
		info.Inputs = []InputFile{}
	}
	if info.Files == nil {
		info.Files = []string{}
	}
	return AtomicWriteFile(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	})
}
