# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_netlens_global_optspecs
    string join \n interval= netns= pid= all-netns no-bpf iface= filter= no-capture payload dns-probe= dns-server= dns-timeout= resolve tab= compact no-color mouse no-mouse config= print-config record= on-finding= on-finding-timeout= h/help V/version
end

function __fish_netlens_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_netlens_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_netlens_using_subcommand
    set -l cmd (__fish_netlens_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c netlens -n "__fish_netlens_needs_command" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_needs_command" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_needs_command" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_needs_command" -l iface -d 'Capture on this interface only (default: any, every interface)' -r
complete -c netlens -n "__fish_netlens_needs_command" -l filter -d 'Capture only packets matching this pcap-filter expression, e.g. "tcp port 443 and not host 198.18.0.1"' -r
complete -c netlens -n "__fish_netlens_needs_command" -l dns-probe -d 'Probe a name on every DNS server once per interval (repeatable): NAME or A:NAME, AAAA:NAME, PTR:ADDR, or an IP address (its PTR)' -r
complete -c netlens -n "__fish_netlens_needs_command" -l dns-server -d 'A DNS server to probe (repeatable), ADDR or ADDR:PORT; default: the nameservers of /etc/resolv.conf. The first also gets --resolve\'s (N\'s) PTR queries' -r
complete -c netlens -n "__fish_netlens_needs_command" -l dns-timeout -d 'How long a query may go unanswered before it counts as a timeout, for probes and for queries seen on the wire; default: the `options timeout` of /etc/resolv.conf, else 5s (at most 60s)' -r
complete -c netlens -n "__fish_netlens_needs_command" -l tab -d 'Tab to open first (default: the config\'s `tab`, else interfaces)' -r -f -a "interfaces\t''
sockets\t''
tcp\t''
conntrack\t''
dns\t''
flows\t''
load\t''
drops\t''
processes\t''
namespaces\t''"
complete -c netlens -n "__fish_netlens_needs_command" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_needs_command" -l record -d 'Record the session to FILE while watching (R starts and stops it too)' -r -F
complete -c netlens -n "__fish_netlens_needs_command" -l on-finding -d 'Run CMD (with /bin/sh -c) when a finding starts and when it clears, the finding as JSON on its stdin (see ON-FINDING in the man page)' -r
complete -c netlens -n "__fish_netlens_needs_command" -l on-finding-timeout -d 'Kill an --on-finding command (its process group) still running after D' -r
complete -c netlens -n "__fish_netlens_needs_command" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_needs_command" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_needs_command" -l no-capture -d 'Do not capture packets (no Flows data, no flow findings)'
complete -c netlens -n "__fish_netlens_needs_command" -l payload -d 'Keep whole packets (up to 64 KiB) instead of the first 384 bytes'
complete -c netlens -n "__fish_netlens_needs_command" -l resolve -d 'Show reverse DNS names for addresses (PTR queries to the first --dns-server, else the first nameserver of /etc/resolv.conf; at most 20 a second, 2s timeout, cached) and service names for ports (from /etc/services); N toggles it in the live view. snapshot adds a names map (JSON) or section (text)'
complete -c netlens -n "__fish_netlens_needs_command" -l compact -d 'Only the tab\'s essentials, no header or footer: for small tmux panes (automatic below 60 columns or 12 rows)'
complete -c netlens -n "__fish_netlens_needs_command" -l no-color -d 'Do not use colour (the NO_COLOR environment variable does the same)'
complete -c netlens -n "__fish_netlens_needs_command" -l mouse -d 'Take the mouse: click tabs and rows (or `mouse = true` in the config; off by default so tmux and the terminal keep their own mouse)'
complete -c netlens -n "__fish_netlens_needs_command" -l no-mouse -d 'Do not take the mouse, even when the config says `mouse = true`'
complete -c netlens -n "__fish_netlens_needs_command" -l print-config -d 'Print a commented default config file and exit'
complete -c netlens -n "__fish_netlens_needs_command" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_needs_command" -s V -l version -d 'Print version'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "snapshot" -d 'Print samples for scripts: a sar-like table, or JSON Lines with --json'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "read" -d 'Print a pcap/pcapng file as tcpdump -n lines, or its flow table'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "load" -d 'Generate load (iperf3, wrk, hping3 and pktgen style) to watch in the other tabs'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "record" -d 'Record samples to a file without a screen, e.g. during an incident'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "replay" -d 'Replay a recording in the live view\'s UI, or print it (--json, --info)'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "capture" -d 'Capture packets headless: tcpdump -n lines, or a pcap file with -w'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "export" -d 'Serve the latest sample as OpenMetrics (Prometheus) on GET /metrics'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "conns" -d 'Print each TCP connection as it ends, as bcc\'s tcplife does'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "tmux" -d 'Open a tmux troubleshooting layout: interfaces, TCP, flows and DNS panes'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "explain" -d 'Print the counter catalogue\'s entry for a kernel counter or drop reason'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "trace" -d 'Trace the path to HOST[:PORT] hop by hop (TCP SYN, UDP or ICMP probes with a rising TTL, as traceroute --tcp and mtr): loss and RTT per hop'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "nftrace" -d 'Trace one flow\'s packets through the nftables rules, as `nft monitor trace`: each rule, return and policy they met, with its verdict'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "man" -d 'Print the man page (roff) to stdout'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "completions" -d 'Print shell completions to stdout'
complete -c netlens -n "__fish_netlens_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l count -d 'Number of samples to print; each covers one interval' -r
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l section -d 'Sections to include, comma separated (default: all)' -r -f -a "interfaces\t''
conntrack\t''
flows\t''
findings\t''
sockets\t''
tcp\t''
dns\t''
drops\t''
processes\t''"
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l where -d 'Print only the sockets, processes and flows EXPR keeps, in the tabs\' filter language (FILTERS), e.g. \'port:443 state:estab\'; --filter is the capture\'s pcap-filter' -r
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l record -d 'Also record the samples (the baseline too) to FILE' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l iface -d 'Capture on this interface only (default: any, every interface)' -r
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l filter -d 'Capture only packets matching this pcap-filter expression, e.g. "tcp port 443 and not host 198.18.0.1"' -r
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l dns-probe -d 'Probe a name on every DNS server once per interval (repeatable): NAME or A:NAME, AAAA:NAME, PTR:ADDR, or an IP address (its PTR)' -r
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l dns-server -d 'A DNS server to probe (repeatable), ADDR or ADDR:PORT; default: the nameservers of /etc/resolv.conf. The first also gets --resolve\'s (N\'s) PTR queries' -r
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l dns-timeout -d 'How long a query may go unanswered before it counts as a timeout, for probes and for queries seen on the wire; default: the `options timeout` of /etc/resolv.conf, else 5s (at most 60s)' -r
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l json -d 'Print one JSON object per sample, one per line'
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l no-capture -d 'Do not capture packets (no Flows data, no flow findings)'
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l payload -d 'Keep whole packets (up to 64 KiB) instead of the first 384 bytes'
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l resolve -d 'Show reverse DNS names for addresses (PTR queries to the first --dns-server, else the first nameserver of /etc/resolv.conf; at most 20 a second, 2s timeout, cached) and service names for ports (from /etc/services); N toggles it in the live view. snapshot adds a names map (JSON) or section (text)'
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand snapshot" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand read" -s f -l filter -d 'Only packets matching this pcap-filter expression, e.g. "tcp port 80"' -r
complete -c netlens -n "__fish_netlens_using_subcommand read" -s c -l count -d 'Stop after this many matching packets' -r
complete -c netlens -n "__fish_netlens_using_subcommand read" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand read" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand read" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand read" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand read" -l flows -d 'Print the flow table instead of packet lines'
complete -c netlens -n "__fish_netlens_using_subcommand read" -l json -d 'With --flows: one JSON object per flow, one per line'
complete -c netlens -n "__fish_netlens_using_subcommand read" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand read" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand read" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand load; and not __fish_seen_subcommand_from serve tcp udp http pktgen probe help" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and not __fish_seen_subcommand_from serve tcp udp http pktgen probe help" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and not __fish_seen_subcommand_from serve tcp udp http pktgen probe help" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and not __fish_seen_subcommand_from serve tcp udp http pktgen probe help" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand load; and not __fish_seen_subcommand_from serve tcp udp http pktgen probe help" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand load; and not __fish_seen_subcommand_from serve tcp udp http pktgen probe help" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand load; and not __fish_seen_subcommand_from serve tcp udp http pktgen probe help" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand load; and not __fish_seen_subcommand_from serve tcp udp http pktgen probe help" -f -a "serve" -d 'Serve the tcp, udp and http tests, like `iperf3 -s` (TCP and UDP on one port)'
complete -c netlens -n "__fish_netlens_using_subcommand load; and not __fish_seen_subcommand_from serve tcp udp http pktgen probe help" -f -a "tcp" -d 'TCP throughput like iperf3: per-interval reports, sender/receiver summary'
complete -c netlens -n "__fish_netlens_using_subcommand load; and not __fish_seen_subcommand_from serve tcp udp http pktgen probe help" -f -a "udp" -d 'UDP with sendmmsg at a given rate: sent/received pps, loss and jitter'
complete -c netlens -n "__fish_netlens_using_subcommand load; and not __fish_seen_subcommand_from serve tcp udp http pktgen probe help" -f -a "http" -d 'Keep-alive HTTP/1.1 like wrk: requests/s, latency percentiles, errors'
complete -c netlens -n "__fish_netlens_using_subcommand load; and not __fish_seen_subcommand_from serve tcp udp http pktgen probe help" -f -a "pktgen" -d 'Drive the kernel\'s pktgen through /proc/net/pktgen'
complete -c netlens -n "__fish_netlens_using_subcommand load; and not __fish_seen_subcommand_from serve tcp udp http pktgen probe help" -f -a "probe" -d 'TCP connect latency like `hping3 -S -c N -p PORT`: min/avg/max and loss'
complete -c netlens -n "__fish_netlens_using_subcommand load; and not __fish_seen_subcommand_from serve tcp udp http pktgen probe help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from serve" -s p -l port -d 'Port for TCP (load streams and HTTP) and UDP' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from serve" -l bind -d 'Address to listen on' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from serve" -l delay -d 'Delay every HTTP response by this long (to test latency reporting)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from serve" -l body -d 'HTTP response body size in bytes' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from serve" -l duration -d 'Exit after this long (default: run until interrupted)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from serve" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from serve" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from serve" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from serve" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from serve" -l json -d 'One JSON object per finished test, one per line'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from serve" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from serve" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from serve" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from tcp" -l to -d 'Server to send to: a `netlens load serve` or an `iperf3 -s` (told apart at the start)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from tcp" -s t -l time -d 'How long to run (at most 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from tcp" -s P -l parallel -d 'Parallel streams' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from tcp" -s b -l bitrate -d 'Target bitrate in bits/s (k, M, G suffixes, 1000-based; 0: unlimited)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from tcp" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from tcp" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from tcp" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from tcp" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from tcp" -s R -l reverse -d 'The server sends and netlens receives'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from tcp" -l json -d 'Per-interval lines, then a summary object, as JSON'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from tcp" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from tcp" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from tcp" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from udp" -l to -d 'Server to send to (a `netlens load serve` reports what it received)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from udp" -s t -l time -d 'How long to run (at most 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from udp" -s b -l bitrate -d 'Target bitrate in bits/s (k, M, G suffixes, 1000-based; 0: unlimited)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from udp" -l size -d 'UDP payload size in bytes' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from udp" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from udp" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from udp" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from udp" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from udp" -l json -d 'Per-interval lines, then a summary object, as JSON'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from udp" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from udp" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from udp" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from http" -s c -l connections -d 'Connections kept open' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from http" -s t -l time -d 'How long to run (at most 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from http" -l threads -d 'Threads sharing the connections' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from http" -l timeout -d 'A response slower than this counts as a timeout error' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from http" -s R -l rate -d 'Total requests per second (0: as fast as the server answers)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from http" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from http" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from http" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from http" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from http" -l json -d 'Per-interval lines, then a summary object, as JSON'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from http" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from http" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from http" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l dev -d 'Interface to send from' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l dst -d 'Destination IP address' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l dst-mac -d 'Destination MAC address' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l count -d 'Packets per device (each thread has one)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l size -d 'Packet size in bytes' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l delay -d 'Delay between packets in nanoseconds' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l threads -d 'Kernel threads (kpktgend_N), one device each' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l clone-skb -d 'Send each allocated packet this many more times' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -s t -l time -d 'Stop after this long even if the count is not reached' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l proc-root -d 'Where pktgen\'s files are (for tests)' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l json -d 'The summary as one JSON object'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from pktgen" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from probe" -s c -l count -d 'Number of probes' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from probe" -s i -l every -d 'Time between probes' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from probe" -l timeout -d 'A connect slower than this counts as lost' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from probe" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from probe" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from probe" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from probe" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from probe" -l json -d 'One JSON object per probe, then a summary object'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from probe" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from probe" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from probe" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from help" -f -a "serve" -d 'Serve the tcp, udp and http tests, like `iperf3 -s` (TCP and UDP on one port)'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from help" -f -a "tcp" -d 'TCP throughput like iperf3: per-interval reports, sender/receiver summary'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from help" -f -a "udp" -d 'UDP with sendmmsg at a given rate: sent/received pps, loss and jitter'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from help" -f -a "http" -d 'Keep-alive HTTP/1.1 like wrk: requests/s, latency percentiles, errors'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from help" -f -a "pktgen" -d 'Drive the kernel\'s pktgen through /proc/net/pktgen'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from help" -f -a "probe" -d 'TCP connect latency like `hping3 -S -c N -p PORT`: min/avg/max and loss'
complete -c netlens -n "__fish_netlens_using_subcommand load; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c netlens -n "__fish_netlens_using_subcommand record" -s o -l output -d 'The recording to create (never overwritten; created with mode 0600)' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand record" -l duration -d 'Stop after this long (default: until SIGINT or SIGTERM; at most 365 days)' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l dns-probe -d 'Probe a name on every DNS server once per interval (repeatable): NAME or A:NAME, AAAA:NAME, PTR:ADDR, or an IP address (its PTR)' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l dns-server -d 'A DNS server to probe (repeatable), ADDR or ADDR:PORT; default: the nameservers of /etc/resolv.conf. The first also gets --resolve\'s (N\'s) PTR queries' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l dns-timeout -d 'How long a query may go unanswered before it counts as a timeout, for probes and for queries seen on the wire; default: the `options timeout` of /etc/resolv.conf, else 5s (at most 60s)' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l iface -d 'Capture on this interface only (default: any, every interface)' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l filter -d 'Capture only packets matching this pcap-filter expression, e.g. "tcp port 443 and not host 198.18.0.1"' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l on-finding -d 'Run CMD (with /bin/sh -c) when a finding starts and when it clears, the finding as JSON on its stdin (see ON-FINDING in the man page)' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l on-finding-timeout -d 'Kill an --on-finding command (its process group) still running after D' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l ring -d 'Keep a rolling recording of the last D in --ring-dir, dropping whole segments (a minute each, shorter for a ring under 3m) from the old end' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l ring-dir -d 'The ring\'s directory (created mode 0700; never a symbolic link)' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand record" -l max-size -d 'Bound the ring\'s files to SIZE on disk (e.g. 200M, 1G): older segments are dropped sooner when over it' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l freeze-on -d 'Write an incident bundle when a finding of this level (warn, crit) or id starts, comma-separated, e.g. crit,udp-drops' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l freeze-after -d 'How much after the finding\'s start a bundle holds' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l bundle-dir -d 'Where bundles go (default: the ring\'s directory)' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand record" -l max-bundles-per-hour -d 'At most N bundles in any hour; the ones over it are named on stderr and not written' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand record" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand record" -l no-capture -d 'Do not capture packets (no Flows data, no flow findings)'
complete -c netlens -n "__fish_netlens_using_subcommand record" -l payload -d 'Keep whole packets (up to 64 KiB) instead of the first 384 bytes'
complete -c netlens -n "__fish_netlens_using_subcommand record" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand record" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand record" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand replay" -l speed -d 'Playback speed, 0.25 to 4096 (times real time; above about 64 the samples a frame has no time for are skipped)' -r
complete -c netlens -n "__fish_netlens_using_subcommand replay" -l at -d 'Start at this time: HH:MM[:SS] (clock time), or an offset from the start such as 90s or 5m' -r
complete -c netlens -n "__fish_netlens_using_subcommand replay" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand replay" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand replay" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand replay" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand replay" -l json -d 'Print the samples as JSON Lines, with the schema of `snapshot --json`'
complete -c netlens -n "__fish_netlens_using_subcommand replay" -l info -d 'Print the duration, sample count, sizes and streams of the file'
complete -c netlens -n "__fish_netlens_using_subcommand replay" -l follow -d 'Follow a recording still being written, as `tail -f`: the view plays from its end and shows each sample as it is appended (with --json, prints it), until the recorder closes the file or Ctrl-C'
complete -c netlens -n "__fish_netlens_using_subcommand replay" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand replay" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand replay" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand capture" -s i -l iface -d 'Interface to capture on (default: any, every interface)' -r
complete -c netlens -n "__fish_netlens_using_subcommand capture" -s f -l filter -d 'Only packets matching this pcap-filter expression, e.g. "tcp port 80"' -r
complete -c netlens -n "__fish_netlens_using_subcommand capture" -s w -l write -d 'Write packets to this file instead of printing lines: FILE.pcapng names each packet\'s interface, namespace, process and container; any other name is a classic pcap, as tcpdump -w writes' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand capture" -s c -l count -d 'Stop after this many matching packets' -r
complete -c netlens -n "__fish_netlens_using_subcommand capture" -l duration -d 'Stop after this long, e.g. 10s, 2m (at most 365 days)' -r
complete -c netlens -n "__fish_netlens_using_subcommand capture" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand capture" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand capture" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand capture" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand capture" -l payload -d 'Keep whole packets (up to 64 KiB) instead of the first 384 bytes'
complete -c netlens -n "__fish_netlens_using_subcommand capture" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand capture" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand capture" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand export" -l listen -d 'Address and port to serve /metrics on (port 0 picks a free port)' -r
complete -c netlens -n "__fish_netlens_using_subcommand export" -l dns-probe -d 'Probe a name on every DNS server once per interval (repeatable): NAME or A:NAME, AAAA:NAME, PTR:ADDR, or an IP address (its PTR)' -r
complete -c netlens -n "__fish_netlens_using_subcommand export" -l dns-server -d 'A DNS server to probe (repeatable), ADDR or ADDR:PORT; default: the nameservers of /etc/resolv.conf. The first also gets --resolve\'s (N\'s) PTR queries' -r
complete -c netlens -n "__fish_netlens_using_subcommand export" -l dns-timeout -d 'How long a query may go unanswered before it counts as a timeout, for probes and for queries seen on the wire; default: the `options timeout` of /etc/resolv.conf, else 5s (at most 60s)' -r
complete -c netlens -n "__fish_netlens_using_subcommand export" -l on-finding -d 'Run CMD (with /bin/sh -c) when a finding starts and when it clears, the finding as JSON on its stdin (see ON-FINDING in the man page)' -r
complete -c netlens -n "__fish_netlens_using_subcommand export" -l on-finding-timeout -d 'Kill an --on-finding command (its process group) still running after D' -r
complete -c netlens -n "__fish_netlens_using_subcommand export" -l ring -d 'Keep a rolling recording of the last D in --ring-dir, dropping whole segments (a minute each, shorter for a ring under 3m) from the old end' -r
complete -c netlens -n "__fish_netlens_using_subcommand export" -l ring-dir -d 'The ring\'s directory (created mode 0700; never a symbolic link)' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand export" -l max-size -d 'Bound the ring\'s files to SIZE on disk (e.g. 200M, 1G): older segments are dropped sooner when over it' -r
complete -c netlens -n "__fish_netlens_using_subcommand export" -l freeze-on -d 'Write an incident bundle when a finding of this level (warn, crit) or id starts, comma-separated, e.g. crit,udp-drops' -r
complete -c netlens -n "__fish_netlens_using_subcommand export" -l freeze-after -d 'How much after the finding\'s start a bundle holds' -r
complete -c netlens -n "__fish_netlens_using_subcommand export" -l bundle-dir -d 'Where bundles go (default: the ring\'s directory)' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand export" -l max-bundles-per-hour -d 'At most N bundles in any hour; the ones over it are named on stderr and not written' -r
complete -c netlens -n "__fish_netlens_using_subcommand export" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand export" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand export" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand export" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand export" -l per-process -d 'Also serve per-process TCP/UDP byte and retransmit counters (labels pid, command, cgroup, container: one series per process holding a socket)'
complete -c netlens -n "__fish_netlens_using_subcommand export" -l capture -d 'Also capture packets (384 bytes each, every interface): servers\' response times (netlens_server_response_seconds) and the findings that need packets, for the capture\'s CPU'
complete -c netlens -n "__fish_netlens_using_subcommand export" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand export" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand export" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand conns" -l duration -d 'Stop after this long (default: until SIGINT or SIGTERM)' -r
complete -c netlens -n "__fish_netlens_using_subcommand conns" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand conns" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand conns" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand conns" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand conns" -l json -d 'Print one JSON object per connection, one per line'
complete -c netlens -n "__fish_netlens_using_subcommand conns" -l failed -d 'Only the connections that failed: refused, syn-timeout, unreachable, reset, timeout'
complete -c netlens -n "__fish_netlens_using_subcommand conns" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand conns" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand conns" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand tmux" -l session -d 'Name of the tmux session to create (inside tmux: of the new window)' -r
complete -c netlens -n "__fish_netlens_using_subcommand tmux" -l iface -d 'Capture on this interface only, in the Flows pane' -r
complete -c netlens -n "__fish_netlens_using_subcommand tmux" -l tmux-socket -d 'The tmux server\'s socket name, as tmux -L takes it (default: tmux\'s)' -r
complete -c netlens -n "__fish_netlens_using_subcommand tmux" -l dns-probe -d 'Probe a name on every DNS server once per interval (repeatable): NAME or A:NAME, AAAA:NAME, PTR:ADDR, or an IP address (its PTR)' -r
complete -c netlens -n "__fish_netlens_using_subcommand tmux" -l dns-server -d 'A DNS server to probe (repeatable), ADDR or ADDR:PORT; default: the nameservers of /etc/resolv.conf. The first also gets --resolve\'s (N\'s) PTR queries' -r
complete -c netlens -n "__fish_netlens_using_subcommand tmux" -l dns-timeout -d 'How long a query may go unanswered before it counts as a timeout, for probes and for queries seen on the wire; default: the `options timeout` of /etc/resolv.conf, else 5s (at most 60s)' -r
complete -c netlens -n "__fish_netlens_using_subcommand tmux" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand tmux" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand tmux" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand tmux" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand tmux" -l detached -d 'Create the session without attaching to it'
complete -c netlens -n "__fish_netlens_using_subcommand tmux" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand tmux" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand tmux" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand explain" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand explain" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand explain" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand explain" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand explain" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand explain" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand explain" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand trace" -s p -l port -d 'Destination port (TCP, UDP), as traceroute -p; overrides HOST:PORT\'s' -r
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l max-ttl -d 'Highest TTL probed' -r
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l count -d 'Rounds to send, one probe per TTL each (default 10, or until --duration when that is given)' -r
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l duration -d 'Stop sending after this long, e.g. 30s' -r
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l rate -d 'Probes per second, at most (1000 at most)' -r
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l timeout -d 'A probe unanswered for this long counts as lost' -r
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l udp -d 'Send UDP datagrams (the destination answers port unreachable)'
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l icmp -d 'Send ICMP echo requests (the destination answers echo reply)'
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l json -d 'Print one JSON object: the hops, their figures and the findings'
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l resolve -d 'Name the hops by reverse DNS (PTR queries to the first nameserver of /etc/resolv.conf, as the live view\'s --resolve/N), asynchronously, waiting at most 2s at the end; without it no name is looked up'
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand trace" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand trace" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand nftrace" -l duration -d 'Stop after this long, e.g. 30s (default: until Ctrl-C)' -r
complete -c netlens -n "__fish_netlens_using_subcommand nftrace" -l count -d 'Stop after this many packets were traced' -r
complete -c netlens -n "__fish_netlens_using_subcommand nftrace" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand nftrace" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand nftrace" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand nftrace" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand nftrace" -l json -d 'Print one JSON object per event, one per line'
complete -c netlens -n "__fish_netlens_using_subcommand nftrace" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand nftrace" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand nftrace" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand man" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand man" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand man" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand man" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand man" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand man" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand man" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand completions" -l interval -d 'Sampling interval, e.g. 1s, 500ms, 2m (100ms to 1h)' -r
complete -c netlens -n "__fish_netlens_using_subcommand completions" -l netns -d 'Watch another network namespace: a name from `ip netns` or a path such as /proc/PID/ns/net' -r
complete -c netlens -n "__fish_netlens_using_subcommand completions" -l pid -d 'Watch the network namespace of a process, e.g. a container\'s: --pid $(docker inspect -f \'{{.State.Pid}}\' NAME)' -r
complete -c netlens -n "__fish_netlens_using_subcommand completions" -l config -d 'Read settings from FILE instead of $XDG_CONFIG_HOME/netlens/config.toml (~/.config/netlens/config.toml); flags override it' -r -F
complete -c netlens -n "__fish_netlens_using_subcommand completions" -l all-netns -d 'Watch every network namespace at once (live, snapshot, record, export): each namespace\'s sockets, interfaces and counters, labelled with its `ip netns` name, a process in it and its container'
complete -c netlens -n "__fish_netlens_using_subcommand completions" -l no-bpf -d 'Do not load the eBPF programs (drop reasons, per-flow counts, socket owners, short connections\' owners); each part falls back to /proc or the packet capture, or is left out, and says so'
complete -c netlens -n "__fish_netlens_using_subcommand completions" -s h -l help -d 'Print help'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "snapshot" -d 'Print samples for scripts: a sar-like table, or JSON Lines with --json'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "read" -d 'Print a pcap/pcapng file as tcpdump -n lines, or its flow table'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "load" -d 'Generate load (iperf3, wrk, hping3 and pktgen style) to watch in the other tabs'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "record" -d 'Record samples to a file without a screen, e.g. during an incident'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "replay" -d 'Replay a recording in the live view\'s UI, or print it (--json, --info)'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "capture" -d 'Capture packets headless: tcpdump -n lines, or a pcap file with -w'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "export" -d 'Serve the latest sample as OpenMetrics (Prometheus) on GET /metrics'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "conns" -d 'Print each TCP connection as it ends, as bcc\'s tcplife does'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "tmux" -d 'Open a tmux troubleshooting layout: interfaces, TCP, flows and DNS panes'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "explain" -d 'Print the counter catalogue\'s entry for a kernel counter or drop reason'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "trace" -d 'Trace the path to HOST[:PORT] hop by hop (TCP SYN, UDP or ICMP probes with a rising TTL, as traceroute --tcp and mtr): loss and RTT per hop'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "nftrace" -d 'Trace one flow\'s packets through the nftables rules, as `nft monitor trace`: each rule, return and policy they met, with its verdict'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "man" -d 'Print the man page (roff) to stdout'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "completions" -d 'Print shell completions to stdout'
complete -c netlens -n "__fish_netlens_using_subcommand help; and not __fish_seen_subcommand_from snapshot read load record replay capture export conns tmux explain trace nftrace man completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c netlens -n "__fish_netlens_using_subcommand help; and __fish_seen_subcommand_from load" -f -a "serve" -d 'Serve the tcp, udp and http tests, like `iperf3 -s` (TCP and UDP on one port)'
complete -c netlens -n "__fish_netlens_using_subcommand help; and __fish_seen_subcommand_from load" -f -a "tcp" -d 'TCP throughput like iperf3: per-interval reports, sender/receiver summary'
complete -c netlens -n "__fish_netlens_using_subcommand help; and __fish_seen_subcommand_from load" -f -a "udp" -d 'UDP with sendmmsg at a given rate: sent/received pps, loss and jitter'
complete -c netlens -n "__fish_netlens_using_subcommand help; and __fish_seen_subcommand_from load" -f -a "http" -d 'Keep-alive HTTP/1.1 like wrk: requests/s, latency percentiles, errors'
complete -c netlens -n "__fish_netlens_using_subcommand help; and __fish_seen_subcommand_from load" -f -a "pktgen" -d 'Drive the kernel\'s pktgen through /proc/net/pktgen'
complete -c netlens -n "__fish_netlens_using_subcommand help; and __fish_seen_subcommand_from load" -f -a "probe" -d 'TCP connect latency like `hping3 -S -c N -p PORT`: min/avg/max and loss'
