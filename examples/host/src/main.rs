//! Sweeps x over [0, 2π] through the hello_world model and prints it against `f32::sin`.

fn main() {
    let mut model = match host::hello_world::Model::take() {
        Some(handle) => handle.init(),
        None => {
            eprintln!("error: the hello_world handle was already taken");
            std::process::exit(1);
        }
    };
    println!("{}", host::describe());
    let mut worst = 0.0f32;
    let mut xs = [0.0f32; 21];
    match host::sweep_inputs(&mut model, &mut xs) {
        Ok(f) => println!(
            "step scope 'pre': {} of {} bytes at the high-water mark, {} needed, {} over",
            f.high_water, f.capacity, f.needed, f.overflow
        ),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
    println!("{:>8} {:>9} {:>9} {:>7}", "x", "model", "sin(x)", "error");
    for x in xs {
        let y = host::infer(&mut model, x);
        let err = y - x.sin();
        worst = worst.max(err.abs());
        println!("{x:>8.3} {y:>9.4} {:>9.4} {err:>+7.3}", x.sin());
    }
    println!("largest error: {worst:.4}");
}

#[cfg(test)]
mod tests {
    // The binary, its test harness included, links with the plan's linker fragment, whose
    // ASSERTs require the arenas in the binary: this test uses them.
    #[test]
    fn the_harness_links_the_arenas_too() {
        let mut model = host::hello_world::Model::take().unwrap().init();
        let y = host::infer(&mut model, std::f32::consts::FRAC_PI_2);
        assert!((y - 1.0).abs() < 0.1, "sin(pi/2) = {y}");
    }
}
