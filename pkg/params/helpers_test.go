package params

import "os"

func readTestFile(p string) ([]byte, error) { return os.ReadFile(p) }
