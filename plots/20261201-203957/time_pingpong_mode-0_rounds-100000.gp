# pingpong/mode:0/rounds:100000: wall time (median, min-max of 5 repetitions)
# Written by run.py plot; data in time_pingpong_mode-0_rounds-100000.dat.  Rerun: gnuplot time_pingpong_mode-0_rounds-100000.gp
datafile = "time_pingpong_mode-0_rounds-100000.dat"

set terminal svg size 900,520 dynamic noenhanced background "#ffffff"
set output "time_pingpong_mode-0_rounds-100000.svg"
reset
set datafile missing NaN
set title "pingpong/mode:0/rounds:100000: wall time (median, min-max of 5 repetitions)"
set xlabel "workers"
set ylabel "time per iteration (ms)"
set grid
set key outside right top
set xtics (1, 2)
set yrange [0:*]
plot datafile index 0 using 1:2:3:4 with yerrorlines lw 1.5 pt 1 lc rgb "#1b9e77" title "adaptive", \
     datafile index 1 using 1:2:3:4 with yerrorlines lw 1.5 pt 2 lc rgb "#d95f02" title "affinity", \
     datafile index 2 using 1:2:3:4 with yerrorlines lw 1.5 pt 3 lc rgb "#7570b3" title "chaselev", \
     datafile index 3 using 1:2:3:4 with yerrorlines lw 1.5 pt 4 lc rgb "#e7298a" title "fair", \
     datafile index 4 using 1:2:3:4 with yerrorlines lw 1.5 pt 5 lc rgb "#66a61e" title "half", \
     datafile index 5 using 1:2:3:4 with yerrorlines lw 1.5 pt 6 lc rgb "#e6ab02" title "numa", \
     datafile index 6 using 1:2:3:4 with yerrorlines lw 1.5 pt 7 lc rgb "#a6761d" title "spin", \
     datafile index 7 using 1:2:3:4 with yerrorlines lw 1.5 pt 8 lc rgb "#666666" title "static", \
     datafile index 8 using 1:2:3:4 with yerrorlines lw 1.5 pt 9 lc rgb "#1f78b4" title "threadpool"
unset output

set terminal pngcairo size 900,520 noenhanced background "#ffffff"
set output "time_pingpong_mode-0_rounds-100000.png"
reset
set datafile missing NaN
set title "pingpong/mode:0/rounds:100000: wall time (median, min-max of 5 repetitions)"
set xlabel "workers"
set ylabel "time per iteration (ms)"
set grid
set key outside right top
set xtics (1, 2)
set yrange [0:*]
plot datafile index 0 using 1:2:3:4 with yerrorlines lw 1.5 pt 1 lc rgb "#1b9e77" title "adaptive", \
     datafile index 1 using 1:2:3:4 with yerrorlines lw 1.5 pt 2 lc rgb "#d95f02" title "affinity", \
     datafile index 2 using 1:2:3:4 with yerrorlines lw 1.5 pt 3 lc rgb "#7570b3" title "chaselev", \
     datafile index 3 using 1:2:3:4 with yerrorlines lw 1.5 pt 4 lc rgb "#e7298a" title "fair", \
     datafile index 4 using 1:2:3:4 with yerrorlines lw 1.5 pt 5 lc rgb "#66a61e" title "half", \
     datafile index 5 using 1:2:3:4 with yerrorlines lw 1.5 pt 6 lc rgb "#e6ab02" title "numa", \
     datafile index 6 using 1:2:3:4 with yerrorlines lw 1.5 pt 7 lc rgb "#a6761d" title "spin", \
     datafile index 7 using 1:2:3:4 with yerrorlines lw 1.5 pt 8 lc rgb "#666666" title "static", \
     datafile index 8 using 1:2:3:4 with yerrorlines lw 1.5 pt 9 lc rgb "#1f78b4" title "threadpool"
unset output
