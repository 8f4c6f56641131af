package live

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseJobs(t *testing.T) {
	specs, err := ParseJobs("f.yaml", []byte(`jobs:
  - name: train
    command: python
    args: [train.py, "--epochs", "3"]
    env: {SEED: "7"}
    gpus: 2
    cpu_milli: 8000
    memory_mib: 1e4
    tenant: research
    priority: 2
    estimate: 2h
    deadline: 1d
    retries: 3
  - {name: probe, command: nvidia-smi, shell: yes, gpu_milli: 250, deps: [train]}
  - {name: mig, command: x, mig_profile: 1g.18gb}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []JobSpec{
		{Name: "train", Command: "python", Args: []string{"train.py", "--epochs", "3"}, Env: map[string]string{"SEED": "7"}, GPUs: 2,
			CPUMilli: 8000, MemoryMiB: 10000, Tenant: "research", Priority: 2, Estimate: "2h", Deadline: "1d", Retries: 3},
		{Name: "probe", Command: "nvidia-smi", Shell: true, GPUMilli: 250, Deps: []string{"train"}},
		{Name: "mig", Command: "x", MIGProfile: "1g.18gb"},
	}
	if !reflect.DeepEqual(specs, want) {
		t.Fatalf("got  %+v\nwant %+v", specs, want)
	}
	for _, empty := range []string{"", "# no jobs yet\n", "jobs: []\n"} {
		if specs, err := ParseJobs("f.yaml", []byte(empty)); err != nil || len(specs) != 0 {
			t.Errorf("%q: %v, %v; want no jobs", empty, specs, err)
		}
	}
}

func TestParseJobsErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"jobs:\n- name: a\n  command: x\n  gpu: 1\n", `f.yaml:4: jobs[0].gpu: unknown field (known fields: name, command, args, shell, env, workdir, gpus, gpu_milli, cpu_milli, memory_mib, mig_profile, tenant, priority, estimate, deadline, retries, deps); did you mean "gpus"?`},
		{"jobs:\n- name: ../x\n  command: x\n", `f.yaml:2: jobs[0].name: "../x" must be letters, digits`},
		{"jobs:\n- name: a\n", `f.yaml:2: jobs[0].command: required field is missing`},
		{"jobs:\n- name: a\n  command: true\n", `f.yaml:3: jobs[0].command: want a string, got boolean true; put it in quotes`},
		{"jobs:\n- name: a\n  command: x\n  estimate: soon\n", `f.yaml:4: jobs[0].estimate:`},
		{"jobs:\n- name: a\n  command: x\n  deadline: 0s\n", `f.yaml:4: jobs[0].deadline: must be > 0, got "0s"`},
		{"jobs:\n- name: a\n  command: x\n- name: a\n  command: y\n", `f.yaml:4: jobs[1].name: "a" is already used by jobs[0]`},
		{"jobs:\n- name: a\n  command: x\n  gpus: 1\n  gpu_milli: 500\n", `f.yaml:5: jobs[0].gpu_milli: give either gpus or gpu_milli, not both`},
		{"jobs:\n- name: a\n  command: x\n  shell: true\n  args: [b]\n", `f.yaml:5: jobs[0].args: not allowed with shell: true`},
		{"jobs:\n- name: a\n  command: x\n  env: {CUDA_VISIBLE_DEVICES: \"0\"}\n", `f.yaml:4: jobs[0].env.CUDA_VISIBLE_DEVICES: "CUDA_VISIBLE_DEVICES" may not be set`},
		{"jobs:\n- name: a\n  command: x\n  retries: 101\n", `f.yaml:4: jobs[0].retries: must be in 0..100, got 101`},
		{"jobs:\n  - {name: a, command: x, deps: [zz]}\n", `f.yaml:2: jobs[0].deps[0]: "zz" is no job of this file`},
		{"jobs:\n  - {name: a, command: x, deps: [a]}\n", `f.yaml:2: jobs[0].deps[0]: a job cannot wait for itself`},
		{"jobs:\n  - {name: a, command: x, deps: [b]}\n  - {name: b, command: x}\n", `f.yaml:2: jobs[0].deps[0]: "b" is listed below it`},
		{"jobs:\n  - {name: a, command: x, cpu_milli: -1}\n", "f.yaml:2: jobs[0].cpu_milli: must be >= 0"},
		{"jobs:\n  - {name: a, command: x, memory_mib: -5}\n", "f.yaml:2: jobs[0].memory_mib: must be >= 0"},
		{"jobs:\n  - {name: a, command: x, gpu_milli: 3000000000}\n", "f.yaml:2: jobs[0].gpu_milli: number 3000000000 is out of range"},
		{"job:\n  - {name: a, command: x}\n", `f.yaml:1: job: unknown field (known fields: jobs); did you mean "jobs"?`},
	} {
		_, err := ParseJobs("f.yaml", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.in, err, c.want)
		}
	}
}

// A job file with several mistakes reports them all, in line order.
func TestParseJobsReportsEveryProblem(t *testing.T) {
	_, err := ParseJobs("jobs.yaml", []byte(`jobs:
  - name: a
    command: train
    gpus: two
  - name: b
    command: eval
    deps: [c]
    retries: -1
`))
	want := `jobs.yaml:4: jobs[0].gpus: want a whole number, got "two"
jobs.yaml:7: jobs[1].deps[0]: "c" is no job of this file
jobs.yaml:8: jobs[1].retries: must be in 0..100, got -1`
	if err == nil || err.Error() != want {
		t.Fatalf("got\n%v\nwant\n%s", err, want)
	}
}
