package cairn

import "fmt"

// LogLevel is how important a log line is.
type LogLevel int

// The log levels, as the host's `log` interface has them.
const (
	LevelTrace LogLevel = iota
	LevelDebug
	LevelInfo
	LevelWarn
	LevelError
)

// Log writes one line into the host's log: it lands in cairn's `tracing`
// output, tagged with the provider's name, filtered by `CAIRN_LOG`
// (`CAIRN_LOG=debug cairn plan`). Outside a component (unit tests) lines
// go to standard error.
func Log(level LogLevel, format string, args ...any) {
	logLine(level, fmt.Sprintf(format, args...))
}

// Tracef logs at trace level.
func Tracef(format string, args ...any) { Log(LevelTrace, format, args...) }

// Debugf logs at debug level.
func Debugf(format string, args ...any) { Log(LevelDebug, format, args...) }

// Infof logs at info level.
func Infof(format string, args ...any) { Log(LevelInfo, format, args...) }

// Warnf logs at warn level.
func Warnf(format string, args ...any) { Log(LevelWarn, format, args...) }

// Errorlogf logs at error level (Errorf makes an error diagnostic).
func Errorlogf(format string, args ...any) { Log(LevelError, format, args...) }
