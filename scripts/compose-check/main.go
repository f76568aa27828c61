// compose-check loads a Compose file the way `docker compose config` does (compose-go: schema
// validation, interpolation from the project's .env, env_file resolution, consistency checks such
// as depends_on targets and declared volumes) and prints the resolved project as JSON. The dev
// machines have no Docker engine or compose plugin; this is how the repo validates
// docker-compose.yml (test/deploy).
//
// Usage: compose-check [--version] <project-dir>   (reads <project-dir>/docker-compose.yml and .env)
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println("compose-check, compose-go", composeGoVersion())
		return
	}
	if len(os.Args) != 2 {
		fail("usage: compose-check <project-dir>")
	}
	dir, err := filepath.Abs(os.Args[1])
	if err != nil {
		fail(err.Error())
	}
	// Only the project's .env feeds interpolation, never this process's environment: the result
	// must not depend on the shell that runs the check.
	options, err := cli.NewProjectOptions(
		[]string{filepath.Join(dir, "docker-compose.yml")},
		cli.WithWorkingDirectory(dir),
		cli.WithEnvFiles(),
		cli.WithDotEnv,
		cli.WithName("spur"),
	)
	if err != nil {
		fail(err.Error())
	}
	project, err := options.LoadProject(context.Background())
	if err != nil {
		fail(err.Error())
	}
	out, err := project.MarshalJSON()
	if err != nil {
		fail(err.Error())
	}
	fmt.Println(string(out))
}

func composeGoVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/compose-spec/compose-go/v2" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, message)
	os.Exit(1)
}
