# imbalance/grain_us:10/tasks:20000/submitters:1/late:0/skew:0: speedup over threadpool vs imbalance, 2 workers
# Written by run.py plot; data in imbalance_vs_threadpool_w2_imbalance_grain_us-10_tasks-20000_submitters-1_late-0_skew-0.dat.  Rerun: gnuplot imbalance_vs_threadpool_w2_imbalance_grain_us-10_tasks-20000_submitters-1_late-0_skew-0.gp
datafile = "imbalance_vs_threadpool_w2_imbalance_grain_us-10_tasks-20000_submitters-1_late-0_skew-0.dat"

set terminal svg size 900,520 dynamic noenhanced background "#ffffff"
set output "imbalance_vs_threadpool_w2_imbalance_grain_us-10_tasks-20000_submitters-1_late-0_skew-0.svg"
reset
set datafile missing NaN
set title "imbalance/grain_us:10/tasks:20000/submitters:1/late:0/skew:0: speedup over threadpool vs imbalance, 2 workers"
set xlabel "imbalance factor"
set ylabel "threadpool time / variant time"
set grid
set key outside right top
set object 1 rectangle from graph 0, first 1.3 to graph 1, first 1.5 behind fillcolor rgb "#d9f0d3" fillstyle solid 1.0 noborder
set label 1 "30-50% claim" at graph 0.02, first 1.4
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#444444"
set yrange [0:1.65]
plot datafile index 0 using 1:2:3:4 with yerrorlines lw 1.5 pt 1 lc rgb "#1b9e77" title "adaptive", \
     datafile index 1 using 1:2:3:4 with yerrorlines lw 1.5 pt 2 lc rgb "#d95f02" title "affinity", \
     datafile index 2 using 1:2:3:4 with yerrorlines lw 1.5 pt 3 lc rgb "#7570b3" title "chaselev", \
     datafile index 3 using 1:2:3:4 with yerrorlines lw 1.5 pt 4 lc rgb "#e7298a" title "fair", \
     datafile index 4 using 1:2:3:4 with yerrorlines lw 1.5 pt 5 lc rgb "#66a61e" title "half", \
     datafile index 5 using 1:2:3:4 with yerrorlines lw 1.5 pt 6 lc rgb "#e6ab02" title "numa", \
     datafile index 6 using 1:2:3:4 with yerrorlines lw 1.5 pt 7 lc rgb "#a6761d" title "spin", \
     datafile index 7 using 1:2:3:4 with yerrorlines lw 1.5 pt 8 lc rgb "#666666" title "static", \
     datafile index 8 using 1:2:3:4 with yerrorlines lw 1.5 pt 9 lc rgb "#b15928" dt 2 title "omp", \
     datafile index 9 using 1:2:3:4 with yerrorlines lw 1.5 pt 10 lc rgb "#6a3d9a" dt 2 title "pool", \
     datafile index 10 using 1:2:3:4 with yerrorlines lw 1.5 pt 11 lc rgb "#e31a1c" dt 2 title "tbb"
unset output

set terminal pngcairo size 900,520 noenhanced background "#ffffff"
set output "imbalance_vs_threadpool_w2_imbalance_grain_us-10_tasks-20000_submitters-1_late-0_skew-0.png"
reset
set datafile missing NaN
set title "imbalance/grain_us:10/tasks:20000/submitters:1/late:0/skew:0: speedup over threadpool vs imbalance, 2 workers"
set xlabel "imbalance factor"
set ylabel "threadpool time / variant time"
set grid
set key outside right top
set object 1 rectangle from graph 0, first 1.3 to graph 1, first 1.5 behind fillcolor rgb "#d9f0d3" fillstyle solid 1.0 noborder
set label 1 "30-50% claim" at graph 0.02, first 1.4
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#444444"
set yrange [0:1.65]
plot datafile index 0 using 1:2:3:4 with yerrorlines lw 1.5 pt 1 lc rgb "#1b9e77" title "adaptive", \
     datafile index 1 using 1:2:3:4 with yerrorlines lw 1.5 pt 2 lc rgb "#d95f02" title "affinity", \
     datafile index 2 using 1:2:3:4 with yerrorlines lw 1.5 pt 3 lc rgb "#7570b3" title "chaselev", \
     datafile index 3 using 1:2:3:4 with yerrorlines lw 1.5 pt 4 lc rgb "#e7298a" title "fair", \
     datafile index 4 using 1:2:3:4 with yerrorlines lw 1.5 pt 5 lc rgb "#66a61e" title "half", \
     datafile index 5 using 1:2:3:4 with yerrorlines lw 1.5 pt 6 lc rgb "#e6ab02" title "numa", \
     datafile index 6 using 1:2:3:4 with yerrorlines lw 1.5 pt 7 lc rgb "#a6761d" title "spin", \
     datafile index 7 using 1:2:3:4 with yerrorlines lw 1.5 pt 8 lc rgb "#666666" title "static", \
     datafile index 8 using 1:2:3:4 with yerrorlines lw 1.5 pt 9 lc rgb "#b15928" dt 2 title "omp", \
     datafile index 9 using 1:2:3:4 with yerrorlines lw 1.5 pt 10 lc rgb "#6a3d9a" dt 2 title "pool", \
     datafile index 10 using 1:2:3:4 with yerrorlines lw 1.5 pt 11 lc rgb "#e31a1c" dt 2 title "tbb"
unset output
