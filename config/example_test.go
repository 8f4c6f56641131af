package config_test

import (
	"fmt"

	"github.com/brigadesim/brigade/config"
)

// Pool is a config type: its fields are the keys its json tags name, and
// Check says what a valid one is.
type Pool struct {
	Name  string `json:"name" config:"required"`
	Size  int    `json:"size" config:"required"`
	Model string `json:"model"`
}

func (p *Pool) Check(e *config.Errors) {
	if p.Size < 1 || p.Size > 64 {
		e.Add("size", "want 1 to 64 GPUs, got %d", p.Size)
	}
}

// Every problem of a file comes at once, each with its line and field.
func ExampleDecode() {
	var p Pool
	err := config.Decode([]byte("name: train\nsize: 99\nmodle: H100\n"), "pool.yaml", &p)
	fmt.Println(err)

	err = config.Decode([]byte("name: train\nsize: 8\nmodel: H100\n"), "pool.yaml", &p)
	fmt.Println(err, p)
	// Output:
	// pool.yaml:2: size: want 1 to 64 GPUs, got 99
	// pool.yaml:3: modle: unknown field (known fields: name, size, model); did you mean "model"?
	// <nil> {train 8 H100}
}

// A value built in Go is checked by the same Check.
func ExampleValidate() {
	fmt.Println(config.Validate(`pool "p"`, &Pool{Name: "p", Size: 0}))
	// Output:
	// pool "p": size: want 1 to 64 GPUs, got 0
}
