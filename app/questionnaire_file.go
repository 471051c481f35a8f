package app

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
)

// xlsxLimits bound what a workbook may unpack to, against zip bombs.
var xlsxLimits = excelize.Options{UnzipSizeLimit: 256 << 20, UnzipXMLSizeLimit: 64 << 20}

// Questionnaire file limits.
const (
	maxQuestions      = 2000
	headerSearchRows  = 20
	questionMaxLength = 4000
)

// SheetLayout records where answers go in one sheet of an uploaded file so
// that export writes them back in the same place.
type SheetLayout struct {
	Sheet     string `json:"sheet"`
	HeaderRow int    `json:"headerRow"` // -1 when the sheet has no header row
	AnswerCol int    `json:"answerCol"`
	// AddedAnswerCol is true when the upload had no answer column and
	// export adds one (with an "Answer" header when there is a header row).
	AddedAnswerCol bool `json:"addedAnswerCol"`
	CommentCol     int  `json:"commentCol"` // -1 when none
}

// parsedFile is the questions of an upload and where they sit.
type parsedFile struct {
	fileType  string
	layout    []SheetLayout
	questions []Question
}

func headerKind(cell string) string {
	c := strings.ToLower(strings.TrimSpace(cell))
	switch {
	case c == "":
		return ""
	case strings.Contains(c, "question"):
		return "question"
	case strings.Contains(c, "answer") || strings.Contains(c, "response") || strings.Contains(c, "reply"):
		return "answer"
	case strings.Contains(c, "comment") || strings.Contains(c, "note") || strings.Contains(c, "remark") || strings.Contains(c, "explanation"):
		return "comment"
	case strings.Contains(c, "section") || strings.Contains(c, "category") || strings.Contains(c, "domain") ||
		strings.Contains(c, "area") || strings.Contains(c, "topic"):
		return "section"
	}
	return ""
}

// gridQuestions finds the questions of one grid of cells: a header row
// naming a question column (and perhaps answer, comment and section
// columns) among the first rows, else the first column that holds text.
func gridQuestions(sheet string, rows [][]string, start int) (SheetLayout, []Question) {
	l := SheetLayout{Sheet: sheet, HeaderRow: -1, AnswerCol: -1, CommentCol: -1}
	qCol, sCol := -1, -1
	for r := 0; r < len(rows) && r < headerSearchRows && qCol < 0; r++ {
		cols := map[string]int{}
		for c, cell := range rows[r] {
			if k := headerKind(cell); k != "" {
				if _, dup := cols[k]; !dup {
					cols[k] = c
				}
			}
		}
		if c, ok := cols["question"]; ok {
			l.HeaderRow, qCol = r, c
			if c, ok := cols["answer"]; ok {
				l.AnswerCol = c
			}
			if c, ok := cols["comment"]; ok {
				l.CommentCol = c
			}
			if c, ok := cols["section"]; ok {
				sCol = c
			}
		}
	}
	width := 0
	for _, row := range rows {
		width = max(width, len(row))
	}
	if qCol < 0 {
		// No header: the first column holding text of some length.
		for c := 0; c < width && qCol < 0; c++ {
			for _, row := range rows {
				if c < len(row) && len(strings.TrimSpace(row[c])) > 8 {
					qCol = c
					break
				}
			}
		}
		if qCol < 0 {
			return l, nil
		}
	}
	if l.AnswerCol < 0 {
		l.AnswerCol, l.AddedAnswerCol = width, true
		if l.HeaderRow >= 0 {
			l.AnswerCol = max(len(rows[l.HeaderRow]), qCol+1)
			for _, row := range rows {
				l.AnswerCol = max(l.AnswerCol, len(row))
			}
		}
	}
	var qs []Question
	section := ""
	for r := l.HeaderRow + 1; r < len(rows); r++ {
		row := rows[r]
		cell := func(c int) string {
			if c < 0 || c >= len(row) {
				return ""
			}
			return strings.TrimSpace(row[c])
		}
		if s := cell(sCol); s != "" {
			section = s
		}
		text := cell(qCol)
		if text == "" {
			continue
		}
		q := Question{Position: start + len(qs), Section: section, Question: text, Status: AnswerUntouched,
			Sheet: sheet, Row: r, AnswerCol: l.AnswerCol, CommentCol: l.CommentCol}
		if a := cell(l.AnswerCol); a != "" && !l.AddedAnswerCol {
			q.Answer = Ptr(a)
			q.Status = AnswerManual
		}
		if c := cell(l.CommentCol); c != "" {
			q.Comment = Ptr(c)
		}
		qs = append(qs, q)
	}
	return l, qs
}

func isXLSX(name string, data []byte) bool {
	return strings.HasSuffix(strings.ToLower(name), ".xlsx") || bytes.HasPrefix(data, []byte("PK\x03\x04"))
}

func readCSVGrid(data []byte) ([][]string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// parseQuestionFile reads the questions of a CSV or XLSX upload.
func parseQuestionFile(name string, data []byte) (*parsedFile, error) {
	pf := &parsedFile{}
	if isXLSX(name, data) {
		pf.fileType = "xlsx"
		f, err := excelize.OpenReader(bytes.NewReader(data), xlsxLimits)
		if err != nil {
			return nil, Invalid("file", CodeInvalid, nil, "the file is not a readable XLSX workbook")
		}
		defer f.Close()
		for _, sheet := range f.GetSheetList() {
			rows, err := f.GetRows(sheet)
			if err != nil {
				return nil, Invalid("file", CodeInvalid, nil, fmt.Sprintf("sheet %q cannot be read", sheet))
			}
			l, qs := gridQuestions(sheet, rows, len(pf.questions))
			if len(qs) > 0 {
				pf.layout = append(pf.layout, l)
				pf.questions = append(pf.questions, qs...)
			}
		}
	} else {
		pf.fileType = "csv"
		rows, err := readCSVGrid(data)
		if err != nil {
			return nil, Invalid("file", CodeInvalid, nil, "the file is not valid CSV: "+err.Error())
		}
		l, qs := gridQuestions("", rows, 0)
		if len(qs) > 0 {
			pf.layout = append(pf.layout, l)
			pf.questions = qs
		}
	}
	if len(pf.questions) == 0 {
		return nil, Invalid("file", CodeInvalid, nil, "no questions found: name a column \"Question\" in a header row")
	}
	if len(pf.questions) > maxQuestions {
		return nil, Invalid("file", CodeTooLong, len(pf.questions), fmt.Sprintf("at most %d questions per questionnaire", maxQuestions))
	}
	for i := range pf.questions {
		if r := []rune(pf.questions[i].Question); len(r) > questionMaxLength {
			pf.questions[i].Question = string(r[:questionMaxLength])
		}
	}
	return pf, nil
}

// Export formats.
const (
	FormatCSV  = "csv"
	FormatXLSX = "xlsx"
)

// ExportFile is a questionnaire rendered as a file.
type ExportFile struct {
	Name        string
	ContentType string
	Data        []byte
}

const xlsxType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

func setGrid(rows [][]string, r, c int, v string) [][]string {
	for len(rows) <= r {
		rows = append(rows, nil)
	}
	for len(rows[r]) <= c {
		rows[r] = append(rows[r], "")
	}
	rows[r][c] = v
	return rows
}

// csvCell keeps a spreadsheet from reading a CSV cell as a formula: a
// value starting with =, +, -, @, tab or carriage return gets a leading
// apostrophe (answers come from vendors and must not run in the reader's
// spreadsheet).
func csvCell(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

func plainCell(v string) string { return v }

// fillGrid writes answers (and comments) of the questions of one sheet
// into its grid, each passed through cell.
func fillGrid(rows [][]string, l SheetLayout, qs []Question, cell func(string) string) [][]string {
	if l.AddedAnswerCol && l.HeaderRow >= 0 {
		rows = setGrid(rows, l.HeaderRow, l.AnswerCol, "Answer")
	}
	for _, q := range qs {
		if q.Sheet != l.Sheet {
			continue
		}
		rows = setGrid(rows, q.Row, q.AnswerCol, cell(deref(q.Answer)))
		if q.CommentCol >= 0 && q.Comment != nil {
			rows = setGrid(rows, q.Row, q.CommentCol, cell(*q.Comment))
		}
	}
	return rows
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// writeCSV writes the grid with every row padded to the same width.
func writeCSV(rows [][]string) ([]byte, error) {
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	for i := range rows {
		for len(rows[i]) < width {
			rows[i] = append(rows[i], "")
		}
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(rows); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func gridXLSX(sheet string, rows [][]string) ([]byte, error) {
	f := excelize.NewFile()
	defer f.Close()
	if sheet == "" {
		sheet = "Questionnaire"
	}
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		return nil, err
	}
	for r, row := range rows {
		for c, v := range row {
			if v == "" {
				continue
			}
			cell, _ := excelize.CoordinatesToCellName(c+1, r+1)
			if err := f.SetCellStr(sheet, cell, v); err != nil {
				return nil, err
			}
		}
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// generatedGrid is the layout of questionnaires that were not uploaded.
func generatedGrid(qs []Question, cell func(string) string) [][]string {
	rows := [][]string{{"Section", "Question", "Answer", "Comment", "Status", "Confidence", "Source"}}
	for _, q := range qs {
		conf, src := "", ""
		if q.Confidence != nil {
			conf = strconv.FormatFloat(*q.Confidence, 'f', 2, 64)
		}
		if q.Source != nil {
			src = q.Source.Name
			if src == "" {
				src = q.Source.ID
			}
		}
		rows = append(rows, []string{cell(q.Section), cell(q.Question), cell(deref(q.Answer)), cell(deref(q.Comment)), q.Status, conf, cell(src)})
	}
	return rows
}

// renderExport builds the export file. original is the uploaded file (nil
// when the questionnaire was not uploaded).
func renderExport(q *Questionnaire, original []byte, format string) (*ExportFile, error) {
	base := strings.Map(func(r rune) rune {
		if r == '"' || r == '/' || r == '\\' || r < 32 {
			return '_'
		}
		return r
	}, q.Name)
	out := &ExportFile{Name: base + "." + format, ContentType: "text/csv; charset=utf-8"}
	if format == FormatXLSX {
		out.ContentType = xlsxType
	}
	var err error
	switch {
	case original == nil || len(q.Layout) == 0:
		cell := plainCell
		if format == FormatCSV {
			cell = csvCell
		}
		rows := generatedGrid(q.Questions, cell)
		if format == FormatCSV {
			out.Data, err = writeCSV(rows)
		} else {
			out.Data, err = gridXLSX("Questionnaire", rows)
		}
	case deref(q.FileType) == FormatXLSX && format == FormatXLSX:
		out.Data, err = fillWorkbook(original, q)
	case deref(q.FileType) == FormatXLSX:
		// CSV holds one sheet: the one with the most questions.
		best := q.Layout[0]
		count := map[string]int{}
		for _, qq := range q.Questions {
			count[qq.Sheet]++
		}
		for _, l := range q.Layout {
			if count[l.Sheet] > count[best.Sheet] {
				best = l
			}
		}
		var rows [][]string
		f, ferr := excelize.OpenReader(bytes.NewReader(original), xlsxLimits)
		if ferr != nil {
			return nil, fmt.Errorf("open uploaded workbook: %w", ferr)
		}
		rows, err = f.GetRows(best.Sheet)
		f.Close()
		if err == nil {
			out.Data, err = writeCSV(fillGrid(rows, best, q.Questions, csvCell))
		}
	default:
		var rows [][]string
		rows, err = readCSVGrid(original)
		if err == nil {
			cell := plainCell
			if format == FormatCSV {
				cell = csvCell
			}
			rows = fillGrid(rows, q.Layout[0], q.Questions, cell)
			if format == FormatCSV {
				out.Data, err = writeCSV(rows)
			} else {
				out.Data, err = gridXLSX("Questionnaire", rows)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("render %s export: %w", format, err)
	}
	return out, nil
}

// fillWorkbook writes the answers into the uploaded workbook, keeping its
// sheets, styles and every other cell.
func fillWorkbook(original []byte, q *Questionnaire) ([]byte, error) {
	f, err := excelize.OpenReader(bytes.NewReader(original), xlsxLimits)
	if err != nil {
		return nil, fmt.Errorf("open uploaded workbook: %w", err)
	}
	defer f.Close()
	for _, l := range q.Layout {
		if l.AddedAnswerCol && l.HeaderRow >= 0 {
			cell, _ := excelize.CoordinatesToCellName(l.AnswerCol+1, l.HeaderRow+1)
			if err := f.SetCellStr(l.Sheet, cell, "Answer"); err != nil {
				return nil, err
			}
		}
	}
	for _, qq := range q.Questions {
		cell, _ := excelize.CoordinatesToCellName(qq.AnswerCol+1, qq.Row+1)
		if err := f.SetCellStr(qq.Sheet, cell, deref(qq.Answer)); err != nil {
			return nil, err
		}
		if qq.CommentCol >= 0 && qq.Comment != nil {
			cell, _ := excelize.CoordinatesToCellName(qq.CommentCol+1, qq.Row+1)
			if err := f.SetCellStr(qq.Sheet, cell, *qq.Comment); err != nil {
				return nil, err
			}
		}
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readAllLimited reads at most n bytes of r.
func readAllLimited(r io.Reader, n int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, n+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > n {
		return nil, Invalid("file", CodeTooLong, nil, fmt.Sprintf("the file exceeds %d bytes", n))
	}
	return data, nil
}
