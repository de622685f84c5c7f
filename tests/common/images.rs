//! Image fixtures shared by the unit tests (`src/assets/tests.rs`) and the integration tests
//! (`tests/it/assets.rs`): one file included by both.

/// A 2×1 two-frame GIF89a whose first frame has a red and a blue pixel (the second is green).
pub fn tiny_gif() -> Vec<u8> {
    use image::codecs::gif::GifEncoder;
    use image::{Delay, Frame, Rgba, RgbaImage};
    let mut out = Vec::new();
    {
        let mut enc = GifEncoder::new(&mut out);
        let mut first = RgbaImage::new(2, 1);
        first.put_pixel(0, 0, Rgba([255, 0, 0, 255]));
        first.put_pixel(1, 0, Rgba([0, 0, 255, 255]));
        let second = RgbaImage::from_pixel(2, 1, Rgba([0, 255, 0, 255]));
        enc.encode_frames(vec![
            Frame::from_parts(first, 0, 0, Delay::from_numer_denom_ms(100, 1)),
            Frame::from_parts(second, 0, 0, Delay::from_numer_denom_ms(100, 1)),
        ])
        .unwrap();
    }
    out
}
