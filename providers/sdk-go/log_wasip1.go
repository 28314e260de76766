//go:build wasip1

package cairn

import (
	hostlog "cairn.dev/sdk-go/internal/wit/imports/cairn_provider_log"
	// The generated exports: linking them in makes the module export the
	// `cairn:provider/provider` functions (and cabi_realloc).
	_ "cairn.dev/sdk-go/internal/wit/exports/wit_exports"
)

func logLine(level LogLevel, message string) {
	hostlog.Log(hostlog.Level(level), message)
}
