package storage

// SetReaderPoolSize bounds the reader pool (tests hold every connection).
func (db *DB) SetReaderPoolSize(n int) {
	db.r.SetMaxOpenConns(n)
	db.r.SetMaxIdleConns(n)
}

// CountQueries is how many list counts ran in SQL.
func CountQueries() int64 { return countQueries.Load() }
