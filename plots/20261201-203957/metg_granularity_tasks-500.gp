# granularity/tasks:500: METG per variant
# Written by run.py plot; data in metg_granularity_tasks-500.dat.  Rerun: gnuplot metg_granularity_tasks-500.gp
datafile = "metg_granularity_tasks-500.dat"

set terminal svg size 900,500 dynamic noenhanced background "#ffffff"
set output "metg_granularity_tasks-500.svg"
reset
set datafile missing NaN
set title "granularity/tasks:500: METG(50%) per variant (lower is better)"
set xlabel ""
set ylabel "METG (us)"
set grid
set key outside right top
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by 90 right
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set grid ytics
set key outside top center horizontal
plot datafile index 0 using 2:3:4:xtic(1) lc rgb "#1b9e77" title "1 worker", \
     datafile index 0 using 5:6:7 lc rgb "#d95f02" title "2 workers"
unset output

set terminal pngcairo size 900,500 noenhanced background "#ffffff"
set output "metg_granularity_tasks-500.png"
reset
set datafile missing NaN
set title "granularity/tasks:500: METG(50%) per variant (lower is better)"
set xlabel ""
set ylabel "METG (us)"
set grid
set key outside right top
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by 90 right
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set grid ytics
set key outside top center horizontal
plot datafile index 0 using 2:3:4:xtic(1) lc rgb "#1b9e77" title "1 worker", \
     datafile index 0 using 5:6:7 lc rgb "#d95f02" title "2 workers"
unset output
