# speedup over affinity, 2 workers
# Written by run.py plot; data in speedup_vs_affinity_w2.dat.  Rerun: gnuplot speedup_vs_affinity_w2.gp
datafile = "speedup_vs_affinity_w2.dat"

set terminal svg size 2790,996 dynamic noenhanced background "#ffffff"
set output "speedup_vs_affinity_w2.svg"
reset
set datafile missing NaN
set title "speedup over affinity, 2 workers (ratio of median times; bars: min-max; log scale)"
set xlabel ""
set ylabel "affinity time / variant time"
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
set logscale y 2
set yrange [*:*]
set format y '%g'
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#444444"
plot datafile index 0 using 2:3:4:xtic(1) lc rgb "#1b9e77" title "adaptive", \
     datafile index 0 using 5:6:7 lc rgb "#7570b3" title "chaselev", \
     datafile index 0 using 8:9:10 lc rgb "#e7298a" title "fair", \
     datafile index 0 using 11:12:13 lc rgb "#66a61e" title "half", \
     datafile index 0 using 14:15:16 lc rgb "#e6ab02" title "numa", \
     datafile index 0 using 17:18:19 lc rgb "#a6761d" title "spin", \
     datafile index 0 using 20:21:22 lc rgb "#666666" title "static", \
     datafile index 0 using 23:24:25 lc rgb "#1f78b4" title "threadpool", \
     datafile index 0 using 26:27:28 lc rgb "#b15928" title "omp", \
     datafile index 0 using 29:30:31 lc rgb "#6a3d9a" title "pool", \
     datafile index 0 using 32:33:34 lc rgb "#e31a1c" title "tbb"
unset output

set terminal pngcairo size 2790,996 noenhanced background "#ffffff"
set output "speedup_vs_affinity_w2.png"
reset
set datafile missing NaN
set title "speedup over affinity, 2 workers (ratio of median times; bars: min-max; log scale)"
set xlabel ""
set ylabel "affinity time / variant time"
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
set logscale y 2
set yrange [*:*]
set format y '%g'
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#444444"
plot datafile index 0 using 2:3:4:xtic(1) lc rgb "#1b9e77" title "adaptive", \
     datafile index 0 using 5:6:7 lc rgb "#7570b3" title "chaselev", \
     datafile index 0 using 8:9:10 lc rgb "#e7298a" title "fair", \
     datafile index 0 using 11:12:13 lc rgb "#66a61e" title "half", \
     datafile index 0 using 14:15:16 lc rgb "#e6ab02" title "numa", \
     datafile index 0 using 17:18:19 lc rgb "#a6761d" title "spin", \
     datafile index 0 using 20:21:22 lc rgb "#666666" title "static", \
     datafile index 0 using 23:24:25 lc rgb "#1f78b4" title "threadpool", \
     datafile index 0 using 26:27:28 lc rgb "#b15928" title "omp", \
     datafile index 0 using 29:30:31 lc rgb "#6a3d9a" title "pool", \
     datafile index 0 using 32:33:34 lc rgb "#e31a1c" title "tbb"
unset output
