package main

func runBagFix(e *env, args []string) error { return usagef("bag fix: not yet") }
