// tests/integration/tegclients.sh: Go's own resolver (no cgo) through the
// transparent path: look a name up, dial it, read one line back.
package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	name, port, other := os.Args[1], os.Args[2], os.Args[3]
	r := &net.Resolver{PreferGo: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, nw := range []string{"ip4", "ip6"} {
		ips, err := r.LookupIP(ctx, nw, name)
		if err != nil {
			fmt.Println(nw, err)
			os.Exit(1)
		}
		d := net.Dialer{Resolver: r, Timeout: 30 * time.Second}
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ips[0].String(), port))
		if err != nil {
			fmt.Println(nw, err)
			os.Exit(1)
		}
		fmt.Fprint(c, "ping\n")
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		fmt.Printf("%s %.6s %s", nw, ips[0].String(), line)
	}
	c, err := (&net.Dialer{Resolver: r, Timeout: 30 * time.Second}).DialContext(ctx, "tcp", net.JoinHostPort(name, port))
	if err != nil {
		fmt.Println("dial", err)
		os.Exit(1)
	}
	fmt.Fprint(c, "ping\n")
	line, _ := bufio.NewReader(c).ReadString('\n')
	c.Close()
	fmt.Printf("dial %s", line)
	_, err = r.LookupIP(ctx, "ip", other)
	if dnsErr, ok := err.(*net.DNSError); ok && dnsErr.IsNotFound {
		fmt.Println("undeclared not found")
	} else {
		fmt.Println("undeclared", err)
	}
}
