//go:build !wasip1

package cairn

import (
	"fmt"
	"os"
)

var levelNames = [...]string{"trace", "debug", "info", "warn", "error"}

// Outside a component (a provider's unit tests): standard error.
func logLine(level LogLevel, message string) {
	name := "?"
	if int(level) >= 0 && int(level) < len(levelNames) {
		name = levelNames[level]
	}
	fmt.Fprintf(os.Stderr, "[%s] %s\n", name, message)
}
