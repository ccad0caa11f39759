# netlens troubleshooting layout for tmux: four compact netlens panes in a
# new window (interfaces, TCP, flows, DNS). For users who keep their own tmux
# config; `netlens tmux` builds the same layout without it.
#
#   tmux source-file /path/to/netlens.tmux        (from a shell inside tmux)
#   :source-file /path/to/netlens.tmux            (at tmux's command prompt)
#   bind-key N source-file ~/.config/netlens/netlens.tmux   (in ~/.tmux.conf)
#
# The Flows pane captures every packet, the DNS pane only DNS (udp port 53);
# the others run with --no-capture. Add --dns-probe NAME to the DNS line to
# probe. netlens must be on tmux's PATH. Add
# --netns NAME or --pid PID to every line to watch a container's namespace.

new-window -n netlens "netlens --compact --tab interfaces --no-capture"
split-window -h "netlens --compact --tab tcp --no-capture"
select-layout tiled
split-window "netlens --compact --tab flows"
select-layout tiled
split-window "netlens --compact --tab dns --filter 'udp port 53'"
select-layout tiled
select-pane -t :.0
