# imbalance/imbalance:2/grain_us:1000/tasks:64/submitters:1/late:0/skew:0: steals, parks, CPU per wall
# Written by run.py plot; data in why_imbalance_imbalance-2_grain_us-1000_tasks-64_submitters-1_late-0_skew-0.dat.  Rerun: gnuplot why_imbalance_imbalance-2_grain_us-1000_tasks-64_submitters-1_late-0_skew-0.gp
datafile = "why_imbalance_imbalance-2_grain_us-1000_tasks-64_submitters-1_late-0_skew-0.dat"

set terminal svg size 1440,540 dynamic noenhanced background "#ffffff"
set output "why_imbalance_imbalance-2_grain_us-1000_tasks-64_submitters-1_late-0_skew-0.svg"
reset
set datafile missing NaN
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by 90 right
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set grid ytics
set key outside top center horizontal
set tmargin 4
set multiplot layout 1,3 title "imbalance/imbalance:2/grain_us:1000/tasks:64/submitters:1/late:0/skew:0: why a variant wins (median, min-max)"
set title "steals"
plot datafile index 0 using 2:3:4:xtic(1) lc rgb "#1b9e77" title "1 worker", \
     datafile index 0 using 5:6:7 lc rgb "#d95f02" title "2 workers"
set title "parks"
unset key
plot datafile index 1 using 2:3:4:xtic(1) lc rgb "#1b9e77" title "1 worker", \
     datafile index 1 using 5:6:7 lc rgb "#d95f02" title "2 workers"
set title "CPU time / wall time (cores busy)"
unset key
plot datafile index 2 using 2:3:4:xtic(1) lc rgb "#1b9e77" title "1 worker", \
     datafile index 2 using 5:6:7 lc rgb "#d95f02" title "2 workers"
unset multiplot
unset output

set terminal pngcairo size 1440,540 noenhanced background "#ffffff"
set output "why_imbalance_imbalance-2_grain_us-1000_tasks-64_submitters-1_late-0_skew-0.png"
reset
set datafile missing NaN
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by 90 right
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set grid ytics
set key outside top center horizontal
set tmargin 4
set multiplot layout 1,3 title "imbalance/imbalance:2/grain_us:1000/tasks:64/submitters:1/late:0/skew:0: why a variant wins (median, min-max)"
set title "steals"
plot datafile index 0 using 2:3:4:xtic(1) lc rgb "#1b9e77" title "1 worker", \
     datafile index 0 using 5:6:7 lc rgb "#d95f02" title "2 workers"
set title "parks"
unset key
plot datafile index 1 using 2:3:4:xtic(1) lc rgb "#1b9e77" title "1 worker", \
     datafile index 1 using 5:6:7 lc rgb "#d95f02" title "2 workers"
set title "CPU time / wall time (cores busy)"
unset key
plot datafile index 2 using 2:3:4:xtic(1) lc rgb "#1b9e77" title "1 worker", \
     datafile index 2 using 5:6:7 lc rgb "#d95f02" title "2 workers"
unset multiplot
unset output
