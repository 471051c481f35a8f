package ui

func init() {
	// yesNo shows an optional boolean a directory reported.
	uiFuncs["yesNo"] = func(b *bool) string {
		switch {
		case b == nil:
			return "Not reported"
		case *b:
			return "Yes"
		}
		return "No"
	}
}
