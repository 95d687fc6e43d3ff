# soak_report.sh -- sourced by soak.sh: the soak's table (markdown) from the
# clients' records, the timeline's events and the RSS snapshots in $run.

# Each call's phase from the events: warm-up, attack (a window of the
# attacker), after-kill (10 s after server b was killed) or steady.
soak_phases() {
    awk 'FNR == NR {
            if ($2 == "warm") warm = $1
            if ($2 == "attack_start") start[++n] = $1
            if ($2 == "attack_end") stop[n] = $1
            if ($2 == "killed") killed = $1
            if ($2 == "stop") { for (i = 1; i <= n; i++) if (!(i in stop)) stop[i] = $1 }
            next
        }
        $1 ~ /^[0-9]+$/ {
            phase = "steady"
            if ($1 < warm) phase = "warm-up"
            else if (killed && $1 >= killed && $1 < killed + 10000) phase = "after-kill"
            for (i = 1; i <= n; i++) if ($1 >= start[i] && $1 < stop[i]) phase = "attack"
            print phase, $0
        }' "$run/events" "$run"/client-*.rec
}

# Calls, outcomes as expected, wrong answers and unexpected errors per kind.
soak_calls_table() {
    echo "| kind | calls | expected outcome | as expected | wrong | unexpected outcomes (code:count) |"
    echo "|---|---:|---|---:|---:|---|"
    awk '{k = $3; calls[k]++; want[k] = $4; wrong[k] += $6
            if ($5 == $4 && $6 == 0) ok[k]++; else if ($6 == 0) bad[k, $5]++
            codes[$5] = 1; all++; all_wrong += $6; all_ok += ($5 == $4 && $6 == 0) }
        END {
            for (k in calls) {
                s = ""
                for (c in codes) if ((k, c) in bad) s = s (s ? ", " : "") c ":" bad[k, c]
                printf "| %s | %d | %s | %d | %d | %s |\n", k, calls[k], want[k], ok[k], wrong[k], s ? s : "-"
            }
            printf "| **all** | %d | | %d | %d | |\n", all, all_ok, all_wrong
        }' "$run/phased" | sort -t'|' -k2,2
}

# Unexpected outcomes by phase: what caused the clear errors.
soak_errors_by_phase() {
    echo "| phase | calls | unexpected outcomes (code:count) |"
    echo "|---|---:|---|"
    awk '{calls[$1]++; if ($5 != $4) { bad[$1, $5]++; codes[$5] = 1 } }
        END { for (p in calls) { s = ""
                for (c in codes) if ((p, c) in bad) s = s (s ? ", " : "") c ":" bad[p, c]
                printf "| %s | %d | %s |\n", p, calls[p], s ? s : "-" } }' "$run/phased" | sort
}

# One detail per unexpected code and phase, as the client library gave it.
soak_error_details() {
    awk '$5 != $4 && !seen[$1, $5]++ { d = ""; for (i = 10; i <= NF; i++) d = d (d ? " " : "") $i
            printf "- %s, %s (%s): %s\n", $1, $5, $3, d }' "$run/phased" | sort | head -30
}

# Latency of good calls' right answers (failures counted beside them), small
# ones and 8 MiB copies apart, with and without the attacker.
soak_latency_table() {
    local group phase kinds label stats p99_without
    echo "| good calls | attacker | answered | failed | p50 ms | p99 ms | p99 / p99 without |"
    echo "|---|---|---:|---:|---:|---:|---:|"
    for group in small big; do
        kinds='$3 == "dcopy" || $3 == "dgemm" || $3 == "live"'
        label="dcopy, dgemm, live_version"
        [[ $group == big ]] && kinds='$3 == "dcopy8M"' label="dcopy of 8 MiB"
        p99_without=""
        for phase in without with; do
            local sel='$1 == "steady" || $1 == "after-kill"'
            [[ $phase == with ]] && sel='$1 == "attack"'
            stats=$(awk "($kinds) && ($sel) && \$5 == \"OK\" && \$6 == 0 {print \$7 * 1000}" "$run/phased" | quantiles)
            local failed
            failed=$(awk "($kinds) && ($sel) && (\$5 != \"OK\" || \$6 != 0)" "$run/phased" | wc -l)
            read -r n p50 p99 <<< "$stats"
            local ratio=-
            [[ $phase == without ]] && p99_without=$p99
            [[ $phase == with && $p99 != - && $p99_without != - ]] &&
                ratio=$(awk -v a="$p99" -v b="$p99_without" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')
            echo "| $label | $phase | $n | $failed | $p50 | $p99 | $ratio |"
        done
    done
}

# RSS of every process: first snapshot after its warm-up, and the last.
soak_rss_table() {
    echo "| process | pid | start MiB | end MiB | end / start |"
    echo "|---|---|---:|---:|---:|"
    grep -E "^(ready|done) " "$run/attacker.log" 2>/dev/null |
        awk '{for (i = 2; i <= NF; i++) if ($i ~ /^rss_kib=/) { split($i, v, "="); kb = v[2] }
            if ($1 == "ready") s = kb; else { w++; printf "| attacker (window %d) | - | %.1f | %.1f | %.2f |\n", w, s / 1024, kb / 1024, (s > 0 ? kb / s : 0) } }'
    awk '$1 == "b-start" && $2 ~ /^server-b/ { bs[$2] = $4; bp[$2] = $3 " (restarted)"; bn[$2] = $5; next }
        $1 == "start" { order[++n] = $2; s[$2] = $4; p[$2] = $3; sn[$2] = $5 }
        $1 == "end" { e[$2] = $4; en[$2] = $5 }
        END {
            for (i = 1; i <= n; i++) {
                r = order[i]
                if (r in bs) { s[r] = bs[r]; p[r] = bp[r]; sn[r] = bn[r] }
                if (r ~ /^client-/) { if (e[r] > 0) { cs += s[r]; ce += e[r]; if (s[r] > 0 && e[r] / s[r] > cr) cr = e[r] / s[r]; nc++ }; continue }
                name = sn[r] != "" ? sprintf("%s (%s -> %s processes)", r, sn[r], en[r]) : r
                printf "| %s | %s | %.1f | %.1f | %s |\n", name, p[r], s[r] / 1024, e[r] / 1024, (s[r] > 0 ? sprintf("%.2f", e[r] / s[r]) : "-")
            }
            if (nc) printf "| %d clients alive at the end (sum; largest ratio of one) | - | %.1f | %.1f | %.2f |\n", nc, cs / 1024, ce / 1024, cr
            # The processes that live through the run (workers come and go).
            for (i = 1; i <= n; i++) { r = order[i]
                if (r ~ /children/ || r ~ /^client-/ || s[r] <= 0) continue
                x = e[r] / s[r]; checked = checked sprintf("%s%s %.2f", checked ? ", " : "", r, x); if (x > 1.10) over++ }
            if (nc && cr > 1.10) over++
            printf "\nRSS at the end within 10 %% of the start (%s, clients at most %.2f): %s\n", checked, cr, over ? "NO" : "yes"
        }' "$run/rss"
}

# Sanitizer reports in the processes' stderr: from each report's first line
# (ASan, LeakSanitizer) or UBSan's "runtime error" line, 12 lines.
soak_sanitizer_reports() {
    grep -H -A11 -E "ERROR: [A-Za-z]*Sanitizer|runtime error:" "$run"/*.err "$run"/*.log 2>/dev/null
}

soak_report() {
    local lost lost_lines missing late wrong died f
    lost_lines=$(cat "$run"/client-*.rec | grep -c "^lost " || true)
    missing=0
    for f in "$run"/client-*.rec; do grep -q "^end " "$f" || missing=$((missing + 1)); done
    soak_phases > "$run/phased"
    # Returned, but past its own time limit and the library's grace by 5 s:
    # the call did not keep its deadline (lost for as long).
    late=$(awk '$7 > $8 + 5' "$run/phased" | wc -l)
    lost=$((lost_lines + (missing > lost_lines ? missing - lost_lines : 0) + late))
    wrong=$(awk '{s += $6} END {print s + 0}' "$run/phased")
    died=$(grep -c " died " "$run/events")
    echo "# Soak: $clients clients, $seconds s, 2 servers behind the metaserver ($(date -u +%Y-%m-%dT%H:%MZ), $rev)"
    echo
    echo "Timeline (percent of the run): warm-up 0-10; attacker ($attack connections, slow and silent,"
    echo "4 source addresses, reconnecting) 20-40 and 70-85; server b SIGKILLed and restarted at 55;"
    echo "module \`live\` re-registered on both servers every 10 s (live1/live2 in turn). Clients think"
    echo "${think} ms (0.5-1.5x) between calls; calls have a ${limit} s time limit (0.3 s for \`timeout\`),"
    echo "and a watchdog of $((limit + 40)) s."
    echo
    echo "## Calls by kind"
    echo
    soak_calls_table
    echo
    echo "## Unexpected outcomes by phase"
    echo
    soak_errors_by_phase
    echo
    echo "What the client library said (the first of each code and phase):"
    echo
    soak_error_details
    echo
    echo "## Latency of good calls' right answers (after warm-up)"
    echo
    soak_latency_table
    echo
    echo "## RSS (start: after warm-up; server b: after its restart's warm-up)"
    echo
    soak_rss_table
    echo
    echo "## Attacker"
    echo
    echo '```'
    grep -E "^(ready|done) " "$run/attacker.log" 2>/dev/null
    echo '```'
    echo
    local reports
    reports=$(soak_sanitizer_reports)
    if [[ -n $reports ]]; then
        echo "## Sanitizer reports"
        echo
        echo '```'
        echo "$reports" | head -60
        echo '```'
        echo
    fi
    if [[ $late -gt 0 ]]; then
        echo "## Calls that returned more than 5 s past their time limit"
        echo
        awk '$7 > $8 + 5 { d = ""; for (i = 10; i <= NF; i++) d = d (d ? " " : "") $i
            printf "- %s, %s: %s after %.1f s (limit %s s): %s\n", $1, $3, $5, $7, $8, d }' "$run/phased" | head -20
        echo
    fi
    if [[ $lost_lines -gt 0 ]]; then
        echo "## Calls the watchdog found still running"
        echo
        cat "$run"/client-*.rec | grep "^lost " | sort | uniq -c | sed 's/^ */- /'
        echo
    fi
    echo "wrong answers: $wrong; lost calls: $lost (watchdog lines $lost_lines, clients without an end" \
        "$missing, returned past their limit + 5 s $late)"
    echo "processes that died by themselves (metaserver, servers): $died"
    if [[ $wrong == 0 && $lost == 0 && $died == 0 ]]; then echo "VERDICT: pass"; else echo "VERDICT: FAIL"; fi
}
