package storage

import "github.com/compliance-appliance/compliance/app"

// ReadModelSize is the read model's memory estimate of a cached value.
func ReadModelSize(v any) int64 {
	switch x := v.(type) {
	case app.List[app.Vendor]:
		return listSize(vendorBytes, vendorSize)(x)
	case app.List[app.Finding]:
		return listSize(findingBytes, findingSize)(x)
	case app.List[app.Evidence]:
		return listSize(evidenceBytes, evidenceSize)(x)
	case app.List[app.Person]:
		return listSize(personBytes, personSize)(x)
	case *app.Vendor:
		return ptrSize(vendorBytes, vendorSize)(x)
	}
	panic("no estimate")
}
