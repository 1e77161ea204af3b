// Renders the Web UI's config template from the environment, as the upstream image's `dockerize
// -template` does (dockerize is not on the Go module proxy): Go templates over `.Env`, with
// dockerize's `default` and `split`. Usage: render-template TEMPLATE OUTPUT
package main

import (
	"os"
	"strings"
	"text/template"
)

func main() {
	if len(os.Args) != 3 {
		os.Stderr.WriteString("usage: render-template TEMPLATE OUTPUT\n")
		os.Exit(2)
	}
	env := map[string]string{}
	for _, pair := range os.Environ() {
		name, value, _ := strings.Cut(pair, "=")
		env[name] = value
	}
	functions := template.FuncMap{
		// default VALUE FALLBACK: FALLBACK when VALUE is empty.
		"default": func(value string, fallback string) string {
			if value == "" {
				return fallback
			}
			return value
		},
		"split": strings.Split,
	}
	source, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	parsed := template.Must(template.New("config").Option("missingkey=zero").Funcs(functions).Parse(string(source)))
	output, err := os.Create(os.Args[2])
	if err != nil {
		panic(err)
	}
	defer output.Close()
	if err := parsed.Execute(output, map[string]any{"Env": env}); err != nil {
		panic(err)
	}
}
