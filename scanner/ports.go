package scanner

import (
	"context"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/compliance-appliance/compliance/app"
)

// top100 is the 100 most frequently open TCP ports, in descending order of
// frequency, as nmap's nmap-services file ranks them (nmap --top-ports 100).
var top100 = []int{
	80, 23, 443, 21, 22, 25, 3389, 110, 445, 139, 143, 53, 135, 3306, 8080, 1723, 111, 995, 993, 5900,
	1025, 587, 8888, 199, 1720, 465, 548, 113, 81, 6001, 10000, 514, 5060, 179, 1026, 2000, 8443, 8000, 32768, 554,
	26, 1433, 49152, 2001, 515, 8008, 49154, 1027, 5666, 646, 5000, 5631, 631, 49153, 8081, 2049, 88, 79, 5800, 106,
	2121, 1110, 49155, 6000, 513, 990, 5357, 427, 49156, 543, 544, 5101, 144, 7, 389, 8009, 3128, 444, 9999, 5009,
	7070, 5190, 3000, 5432, 1900, 3986, 13, 1029, 9, 5051, 6646, 49157, 1028, 873, 1755, 2717, 4899, 9100, 119, 37,
}

// appPorts are well-known application ports above 1024 outside the top 100
// (databases, caches, queues, admin consoles) that the standard depth adds
// to ports 1-1024.
var appPorts = []int{
	1080, 1194, 1521, 1883, 2082, 2083, 2086, 2087, 2181, 2375, 2376, 2379, 2380, 3001, 3268, 3269, 3690, 4000, 4369, 4443,
	4444, 4567, 4848, 5001, 5044, 5353, 5601, 5672, 5683, 5985, 5986, 6379, 6443, 6667, 7001, 7002, 7077, 7443, 7474, 7687,
	8001, 8002, 8010, 8020, 8042, 8069, 8082, 8083, 8086, 8088, 8089, 8090, 8161, 8180, 8200, 8280, 8300, 8333, 8500, 8530,
	8531, 8761, 8834, 8880, 8983, 9000, 9001, 9042, 9043, 9060, 9080, 9090, 9091, 9092, 9200, 9300, 9418, 9443, 9990, 10250,
	11211, 15672, 27017, 27018, 50000, 50070,
}

// riskyServices are services that should not be reachable from the
// network the scan comes from: unencrypted remote logins and file
// transfer, and databases, caches and container APIs without a gateway.
var riskyServices = map[int]string{
	21: "FTP", 23: "Telnet", 69: "TFTP", 512: "rexec", 513: "rlogin", 514: "rsh", 1433: "Microsoft SQL Server", 1521: "Oracle database",
	2375: "Docker API (plain)", 3306: "MySQL", 5432: "PostgreSQL", 5900: "VNC", 6379: "Redis", 9200: "Elasticsearch",
	11211: "memcached", 27017: "MongoDB", 2379: "etcd", 10250: "Kubelet API",
}

// serviceNames name common ports in the report.
var serviceNames = map[int]string{
	21: "ftp", 22: "ssh", 23: "telnet", 25: "smtp", 53: "dns", 80: "http", 110: "pop3", 143: "imap", 443: "https", 445: "smb",
	465: "smtps", 587: "submission", 993: "imaps", 995: "pop3s", 3306: "mysql", 3389: "rdp", 5432: "postgresql", 5900: "vnc",
	6379: "redis", 8080: "http-alt", 8443: "https-alt", 9200: "elasticsearch", 11211: "memcached", 27017: "mongodb",
}

// PortsFor returns the ports a depth tries: quick the top 100, standard
// ports 1-1024 with the top 100 and appPorts, deep every port.
func PortsFor(depth string) []int {
	switch depth {
	case "deep":
		out := make([]int, 65535)
		for i := range out {
			out[i] = i + 1
		}
		return out
	case "standard":
		seen := map[int]bool{}
		var out []int
		add := func(p int) {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
		for p := 1; p <= 1024; p++ {
			add(p)
		}
		for _, p := range top100 {
			add(p)
		}
		for _, p := range appPorts {
			add(p)
		}
		sort.Ints(out)
		return out
	}
	return append([]int(nil), top100...)
}

// scanPorts connects to each port and reads what the service says first.
func (s *scan) scanPorts(ctx context.Context, ports []int, offset int, already []app.ScanPort) []app.ScanPort {
	var mu sync.Mutex
	open := append([]app.ScanPort(nil), already...)
	// The ports are handed out in order; tried marks each one done, and
	// prefix is how many from the start are all done: the checkpoint.
	tried := make([]bool, len(ports))
	prefix := 0
	index := make(map[int]int, len(ports))
	for i, p := range ports {
		index[p] = i
	}
	work := make(chan int)
	var wg sync.WaitGroup
	workers := 32
	if len(ports) < workers {
		workers = len(ports)
	}
	done := 0
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				sp, ok := s.probePort(ctx, p)
				if ctx.Err() != nil {
					return // an attempt cut short is not a port tried
				}
				mu.Lock()
				if ok && !slices.ContainsFunc(open, func(o app.ScanPort) bool { return o.Port == sp.Port }) {
					open = append(open, sp)
				}
				tried[index[p]] = true
				for prefix < len(tried) && tried[prefix] {
					prefix++
				}
				done++
				if done%50 == 0 || done == len(ports) {
					s.progress("ports", 5+(offset+done)*35/(offset+len(ports)), app.CheckPorts)
					found := append([]app.ScanPort(nil), open...)
					s.checkpoint(func(cp *app.ScanCheckpoint) {
						cp.PortsTried, cp.OpenPorts = offset+prefix, found
					})
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, p := range ports {
		select {
		case work <- p:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	sort.Slice(open, func(i, j int) bool { return open[i].Port < open[j].Port })
	return open
}

func (s *scan) probePort(ctx context.Context, port int) (app.ScanPort, bool) {
	dctx, cancel := context.WithTimeout(ctx, s.sc.connectTimeout)
	defer cancel()
	c, err := s.dial(dctx, "tcp", net.JoinHostPort(s.host, strconv.Itoa(port)))
	if err != nil {
		return app.ScanPort{}, false
	}
	defer c.Close()
	sp := app.ScanPort{Port: port, Service: serviceNames[port]}
	_ = c.SetReadDeadline(time.Now().Add(s.sc.bannerTimeout))
	buf := make([]byte, 256)
	n, _ := c.Read(buf)
	sp.Banner = cleanBanner(string(buf[:n]))
	return sp, true
}

// cleanBanner keeps the first line of a banner, printable characters only.
func cleanBanner(b string) string {
	if i := strings.IndexAny(b, "\r\n"); i >= 0 {
		b = b[:i]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, b)
}
